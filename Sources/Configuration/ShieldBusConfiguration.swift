// Configuration: reading the files users write — the broker configuration — with errors that name file, line and key.

import BusProtocol
import DeviceAPI
import Foundation

/// A ShieldBus configuration file: the bus settings and the plugins to run.
public struct ShieldBusConfiguration {
    /// The file it was read from.
    public var file: String
    /// A short name for the product this configuration runs.
    public var name: String
    public var bus = BusSection()
    /// Where the journal goes (relative paths are relative to the working directory), if anywhere.
    public var journal: String?
    public var plugins: [PluginDeclaration] = []
    public var clock = ClockSection()
    /// The device's time zone (IANA name).
    public var timeZone = "UTC"
    /// `faithful` or `ios-realistic`.
    public var profile = "faithful"
    /// The iOS release whose Screen Time bugs the device reproduces (`IOSRelease`), if any.
    public var ios: IOSRelease?
    /// Quirks switched on or off on top of the profile (and the release).
    public var quirks: [String: Bool] = [:]
    public var seed: UInt64 = 1
    /// The app catalog file (relative to this file).
    public var catalog: String?
    /// The device's persistent state folder (relative to this file); default: `<runtime dir>/state`.
    public var state: String?
    /// The scenario `shieldbus run` plays when none is given (relative to this file).
    public var scenario: String?
    public var device = DeviceSection()
    public var appGroups: [AppGroupDeclaration] = []
    /// The products on the device, when it runs several (`products:`); see `resolvedProducts`.
    public var products: [ProductDeclaration] = []
    /// The promise of the one product a configuration without `products:` runs (`promise:`).
    public var promise: Promise?
    /// Outside clients (admitted by the runtime directory's cookie) and the roles they may take; nil: the
    /// default (taps, tools and generic plugins of any name).
    public var clients: [ClientDeclaration]?

    /// Roles outside clients may take: for one name, or (no name) for any.
    public struct ClientDeclaration: Equatable {
        public var name: String?
        public var roles: [Role]
        /// Topic namespaces only this client may publish into (it needs a name).
        public var namespaces: [String] = []

        public init(name: String? = nil, roles: [Role], namespaces: [String] = []) {
            self.name = name
            self.roles = roles
            self.namespaces = namespaces
        }
    }

    /// How the bus clock runs.
    public struct ClockSection: Equatable {
        /// `real`, `scaled` or `virtual`.
        public var mode = "real"
        /// Bus seconds per wall second, for `scaled`.
        public var speed: Double = 60
        /// Local date-time the clock starts at (`scaled`, `virtual`), e.g. 2026-11-23T06:00.
        public var start: String?
        public static let modes = ["real", "scaled", "virtual"]
    }

    /// The simulated device.
    public struct DeviceSection: Equatable {
        /// The product's main app, by name or bundle id (it must be in the catalog).
        public var companionApp: String?
        /// The plugin that is the companion app's process.
        public var companionPlugin: String?
        /// The only plugin that may remove shields.
        public var managedSettingsOwner: String?
        /// `approve`, `deny` or `ask` (`notDetermined` until a scenario step or `shieldbus authorize` answers).
        public var authorization = "approve"
        public var selectionApps: [String] = []
        public var selectionCategories: [String] = []
        public var selectionDomains: [String] = []
        /// The habits the product's app offers (`habits:`): `shieldbus do habit` and the Studio refuse any other; an
        /// empty list: the product has no habits; nil (not given): the person may name any.
        public var habits: [String]?
        public var replyTimeoutMs: Int64 = 1000
        public var clockTicks = true
        /// Screen Time's own web limits (Settings › Screen Time): domain → minutes a day.
        public var webLimits: [String: Int] = [:]
        /// Content & Privacy Restrictions: domains that cannot be browsed at all.
        public var restrictedDomains: [String] = []
        public static let authorizationPolicies = ["approve", "deny", "ask"]
    }

    /// An app group: a shared store, and which plugin may write which keys.
    public struct AppGroupDeclaration: Equatable {
        public var name: String
        /// Writer (plugin name) → key patterns (exact keys, or prefixes ending in `*`).
        public var slices: [String: [String]]
        public var line: Int
        /// Key patterns several plugins write by design (`shared:`): a second writer of one is not reported.
        public var shared: [String] = []
        /// Whether `UserDefaults` writes outside the writer's slice are refused (`strictSlices: true`); by default
        /// every plugin of the group writes every key, as on iOS, and the slices say who is expected to.
        public var strictSlices = false
    }

    /// The line of each key that names something defined elsewhere (plugins, apps), for error messages.
    public var lines: [String: Int] = [:]

    /// Settings of the bus itself.
    public struct BusSection: Equatable {
        public var maxBodyBytes = defaultMaximumBodyBytes
        public var heartbeatMs: Int64 = 1000
        public var sessionTimeoutMs: Int64 = 5000
        public var highWaterMark: Int32 = 100_000
        /// How long virtual time waits for a plugin's acknowledgements before it stops waiting for that plugin.
        public var ackTimeoutMs: Int64 = 5000
        /// How long the broker waits for every plugin to connect before `bus.ready`.
        public var startupTimeoutMs: Int64 = 10_000
        /// The most unacknowledged events kept for redelivery per supervised plugin.
        public var deliveryLogLimit: Int = 100_000
        /// Who may connect on tcp (CURVE); without it the broker makes a fresh key each run and admits only its
        /// own plugins and its user's tools.
        public var curve = CurveSection()
        /// The largest `maxBodyBytes` accepted: libzmq's frame limit is derived from it.
        public static let maximumBodyBytesLimit = 16 << 20
    }

    /// `bus.curve`: the broker's key and the clients allowed in on tcp.
    public struct CurveSection: Equatable {
        /// The broker's secret certificate (`shieldbus keys new`), relative to this file.
        public var serverKey: Reference?
        /// Clients' public certificates (files, relative to this file) or public keys (40 characters of Z85).
        public var allow: [Reference] = []
    }

    /// A value that names something read later (a file), with where it was written, for errors.
    public struct Reference: Equatable {
        public var value: String
        public var line: Int
        public var column: Int
        public var key: String

        /// An error about this value, naming the configuration's file, line and key.
        public func error(_ message: String, file: String) -> ConfigurationError {
            ConfigurationError(file: file, line: line, column: column, key: key, message: message)
        }
    }

    /// A plugin to start and supervise.
    public struct PluginDeclaration: Equatable {
        /// The variables the broker gives every launch (protocol.md § 12.1), and what each is: an entry's `environment`
        /// may not set them, since its value would never reach the plugin.
        public static let launchEnvironment: [String: String] = [
            "TZ": "the device's time zone in force; set the device's zone with the top-level `timeZone`, or `shieldbus do time-zone`",
            "HOME": "the plugin's own container", "XDG_CONFIG_HOME": "in the plugin's own container",
            "XDG_DATA_HOME": "in the plugin's own container", "XDG_CACHE_HOME": "in the plugin's own container",
            "SHIELDBUS_ENDPOINT": "the bus's endpoint", "SHIELDBUS_RUNTIME_DIR": "the runtime folder",
            "SHIELDBUS_PLUGIN_NAME": "the entry's `name`", "SHIELDBUS_PLUGIN_ROLE": "the entry's `role`",
            "SHIELDBUS_SUPERVISED": "1", "SHIELDBUS_BROKER_PID": "the broker's process id",
            "SHIELDBUS_CREDENTIAL": "the launch's own credential", "SHIELDBUS_PLUGIN_OPTIONS_FILE": "the entry's `options`, as a file",
            "SHIELDBUS_STATE_DIR": "the device's state folder", "SHIELDBUS_APP_GROUPS": "the App Groups the plugin is in (comma-separated)",
            "SHIELDBUS_EPHEMERAL": "whether the profile makes the plugin a short-lived extension",
            "SHIELDBUS_SANDBOX": "the sandbox the plugin runs in",
        ]

        public var name: String
        /// A built product name (looked up next to `shieldbus`), or a path.
        public var executable: String
        public var arguments: [String] = []
        public var environment: [String: String] = [:]
        public var role: Role
        public var restart: String = "on-failure"
        /// Plugin-specific settings, handed to the plugin as a JSON file (SHIELDBUS_PLUGIN_OPTIONS_FILE).
        public var options: JSONValue = [:]
        /// The app group the plugin uses (one of `appGroups`), handed to it as SHIELDBUS_APP_GROUP.
        public var appGroup: String?
        /// Topic namespaces only this plugin may publish into, beyond its own `x.<name>.`.
        public var namespaces: [String] = []
        /// Files and folders a sandboxed plugin may also read (an interpreter installed in a home folder, data it
        /// ships with); resolved against the configuration's folder.
        public var readable: [String] = []
        /// Folders a sandboxed plugin may also write (a test's output folder); resolved as `readable`.
        public var writable: [String] = []
        /// It may publish the person's input (`input.*`), as only the person's tools otherwise may: a test driver.
        public var personInput = false
        public var line: Int
    }

    public static let restartPolicies = ["never", "on-failure", "always"]

    /// Reads and validates a configuration file.
    public static func load(path: String) throws -> ShieldBusConfiguration {
        try parse(YAMLValue.load(path: path))
    }

    /// Validates a parsed configuration document.
    public static func parse(_ document: YAMLValue) throws -> ShieldBusConfiguration {
        let top = try document.uniqueMapping(allowed: ["name", "bus", "journal", "plugins", "clock", "timeZone", "profile", "ios", "quirks",
                                                 "seed", "catalog", "state", "scenario", "device", "appGroups", "clients", "products", "promise"])
        var configuration = ShieldBusConfiguration(file: document.file, name: try top["name"]?.string() ?? "shieldbus")
        try configuration.parseDevice(top)
        if let bus = top["bus"] {
            let fields = try bus.uniqueMapping(allowed: ["maxBodyBytes", "heartbeatMs", "sessionTimeoutMs", "highWaterMark", "ackTimeoutMs", "startupTimeoutMs", "deliveryLogLimit", "curve"])
            if let value = fields["ackTimeoutMs"] { configuration.bus.ackTimeoutMs = Int64(try positive(value)) }
            if let value = fields["startupTimeoutMs"] { configuration.bus.startupTimeoutMs = Int64(try positive(value)) }
            if let value = fields["deliveryLogLimit"] { configuration.bus.deliveryLogLimit = try positive(value) }
            if let value = fields["maxBodyBytes"] {
                configuration.bus.maxBodyBytes = try positive(value)
                if configuration.bus.maxBodyBytes > BusSection.maximumBodyBytesLimit {
                    throw value.error("must be at most \(BusSection.maximumBodyBytesLimit) (16 MiB): the bus is for events, not files")
                }
            }
            if let curve = fields["curve"] {
                let members = try curve.uniqueMapping(allowed: ["serverKey", "allow"])
                func reference(_ value: YAMLValue) throws -> Reference {
                    Reference(value: try value.string(), line: value.line, column: value.column, key: value.keyPath)
                }
                configuration.bus.curve.serverKey = try members["serverKey"].map(reference)
                configuration.bus.curve.allow = try members["allow"]?.list().map(reference) ?? []
            }
            if let value = fields["heartbeatMs"] { configuration.bus.heartbeatMs = Int64(try positive(value)) }
            if let value = fields["sessionTimeoutMs"] { configuration.bus.sessionTimeoutMs = Int64(try positive(value)) }
            if let value = fields["highWaterMark"] { configuration.bus.highWaterMark = Int32(try positive(value)) }
            if configuration.bus.sessionTimeoutMs <= configuration.bus.heartbeatMs * 2 {
                throw (fields["sessionTimeoutMs"] ?? bus).error("must be more than twice heartbeatMs (\(configuration.bus.heartbeatMs)) so one late heartbeat is not a timeout")
            }
        }
        configuration.journal = try top["journal"]?.string()
        var names = Set<String>()
        var namespaces = Set<String>()
        for entry in try top["plugins"]?.list() ?? [] {
            let fields = try entry.uniqueMapping(allowed: ["name", "executable", "arguments", "environment", "role", "restart", "options", "appGroup", "namespaces", "principalClass", "readable", "writable", "personInput"])
            guard let nameValue = fields["name"] else { throw entry.error("a plugin needs a 'name'") }
            let name = try nameValue.string()
            if let problem = BusTable.screenTime.nameProblem(with: name) { throw nameValue.error(problem.description) }
            guard !names.contains(name) else { throw nameValue.error("the plugin name '\(name)' is used twice") }
            names.insert(name)
            guard let executable = fields["executable"] else { throw entry.error("plugin '\(name)' needs an 'executable' (a built product name or a path)") }
            guard let roleValue = fields["role"] else {
                throw entry.error("plugin '\(name)' needs a 'role' (one of \(BusTable.screenTime.roles.map(\.rawValue).joined(separator: ", ")))")
            }
            var plugin = PluginDeclaration(name: name, executable: try executable.string(), role: try roleValue.oneOf(BusTable.screenTime.roles), line: entry.line)
            plugin.arguments = try fields["arguments"]?.stringList() ?? []
            plugin.environment = try fields["environment"]?.stringMap() ?? [:]
            if let environment = fields["environment"] {
                for (key, value) in try environment.mapping() where PluginDeclaration.launchEnvironment[key] != nil {
                    throw value.error("'\(key)' is set by the broker at every launch (\(PluginDeclaration.launchEnvironment[key]!)): an entry's value would be replaced without a word")
                }
            }
            plugin.readable = (try fields["readable"]?.stringList() ?? []).map(configuration.resolve)
            plugin.writable = (try fields["writable"]?.stringList() ?? []).map(configuration.resolve)
            plugin.personInput = try fields["personInput"]?.bool() ?? false
            if let options = fields["options"] {
                guard case .mapping = options.node else { throw options.error("options are a mapping of plugin settings, e.g. {unlockMinutes: 30}") }
                try ReferencePluginOptions.check(options, executable: plugin.executable)
                // A reference plugin's `options.appGroup` is the group it opens: misspelt, it is caught here, with
                // the group declared a few lines above, not when the plugin starts and fails.
                if ReferencePluginOptions.isReferencePlugin(plugin.executable), let group = try options.uniqueMapping()["appGroup"] {
                    _ = try configuration.declaredAppGroup(group, plugin: name)
                }
                plugin.options = try options.jsonValue()
            }
            if let group = fields["appGroup"] {
                plugin.appGroup = try configuration.declaredAppGroup(group, plugin: name)
                // The environment is what the plugin process gets; the SDK checks the group there at start.
                plugin.environment["SHIELDBUS_APP_GROUP"] = plugin.appGroup
                if let declaration = configuration.appGroups.first(where: { $0.name == plugin.appGroup }) {
                    plugin.environment["SHIELDBUS_APP_GROUP_SHARED"] = declaration.shared.joined(separator: ",")
                    plugin.environment["SHIELDBUS_APP_GROUP_STRICT"] = declaration.strictSlices ? "1" : "0"
                }
            }
            if let restart = fields["restart"] {
                let word = try restart.string()
                guard restartPolicies.contains(word) else {
                    throw restart.error("expected one of \(restartPolicies.joined(separator: ", ")), got '\(word)'")
                }
                plugin.restart = word
            }
            plugin.namespaces = try declaredNamespaces(fields["namespaces"], taken: &namespaces)
            // The extension's principal class (NSExtensionPrincipalClass): which of the program's classes runs.
            if let principal = fields["principalClass"] { plugin.environment["SHIELDBUS_PRINCIPAL_CLASS"] = try principal.string() }
            configuration.plugins.append(plugin)
        }
        if let clients = top["clients"] {
            configuration.clients = try clients.list().map { entry in
                let fields = try entry.uniqueMapping(allowed: ["name", "roles", "namespaces"])
                let name = try fields["name"]?.string()
                if let name, let problem = BusTable.screenTime.nameProblem(with: name) { throw fields["name"]!.error(problem.description) }
                guard let roles = fields["roles"] else { throw entry.error("a client entry needs 'roles' (any of \(BusTable.screenTime.roles.map(\.rawValue).joined(separator: ", ")))") }
                let declared = try declaredNamespaces(fields["namespaces"], taken: &namespaces)
                if !declared.isEmpty && name == nil { throw fields["namespaces"]!.error("only a client with a 'name' may declare namespaces") }
                return ClientDeclaration(name: name, roles: try roles.list().map { try $0.oneOf(BusTable.screenTime.roles) }, namespaces: declared)
            }
        }
        if let products = top["products"] {
            try configuration.parseProducts(products, device: top["device"], promise: top["promise"])
        } else {
            configuration.promise = try top["promise"].map(Promise.parse)
        }
        return configuration
    }

    /// A `namespaces:` list: topic segments that are none of the system's namespaces and declared only once.
    private static func declaredNamespaces(_ value: YAMLValue?, taken: inout Set<String>) throws -> [String] {
        guard let value else { return [] }
        return try value.list().map { item in
            let namespace = try item.string()
            if namespace.contains(".") || Topic.syntaxProblem(with: namespace) != nil {
                throw item.error("a namespace is one topic segment of a-z, 0-9, '_' and '-', e.g. focuscoach")
            }
            if BusTable.screenTime.namespaces.contains(namespace) {
                throw item.error("'\(namespace)' is one of the system's namespaces (\(BusTable.screenTime.namespaces.joined(separator: ", ")))")
            }
            guard taken.insert(namespace).inserted else { throw item.error("the namespace '\(namespace)' is declared twice") }
            return namespace
        }
    }

    /// The app group named by a plugin's `appGroup:`, which must be one of `appGroups` (read before the plugins).
    private func declaredAppGroup(_ value: YAMLValue, plugin: String) throws -> String {
        let group = try value.string()
        let declared = appGroups.map(\.name)
        guard declared.contains(group) else {
            let suggestion = closest(to: group, in: declared).map { " — did you mean '\($0)'?" } ?? ""
            let fix = declared.isEmpty ? "no app groups are declared: add it under `appGroups:` (with its slices)"
                : "declared app groups: \(declared.joined(separator: ", ")); fix the name or declare the group under `appGroups:`"
            throw value.error("plugin '\(plugin)' names the app group '\(group)', which is not declared\(suggestion) (\(fix))")
        }
        return group
    }

    private static func positive(_ value: YAMLValue) throws -> Int {
        let number = try value.int()
        guard number > 0 else { throw value.error("must be a positive number, got \(number)") }
        return number
    }

    /// A product's `habits:`: names, each once (whatever its case: the person's spelling is matched without it).
    static func habitList(_ value: YAMLValue) throws -> [String] {
        var habits: [String] = []
        for entry in try value.list() {
            let habit = try entry.string().trimmingCharacters(in: .whitespaces)
            guard !habit.isEmpty else { throw entry.error("a habit needs a name, e.g. Read") }
            guard !habits.contains(where: { $0.caseInsensitiveCompare(habit) == .orderedSame }) else { throw entry.error("the habit '\(habit)' is listed twice") }
            habits.append(habit)
        }
        return habits
    }

    private mutating func parseDevice(_ top: [String: YAMLValue]) throws {
        if let clockValue = top["clock"] {
            let fields = try clockValue.uniqueMapping(allowed: ["mode", "speed", "start"])
            if let mode = fields["mode"] {
                let word = try mode.string()
                guard ClockSection.modes.contains(word) else { throw mode.error("expected one of \(ClockSection.modes.joined(separator: ", ")), got '\(word)'") }
                clock.mode = word
            }
            if let speed = fields["speed"] {
                clock.speed = try speed.double()
                guard clock.speed > 0 else { throw speed.error("must be a positive number") }
            }
            if let start = fields["start"] {
                let text = try start.string()
                guard LocalDateTime(parsing: text) != nil else { throw start.error("expected a local date-time like 2026-11-23T06:00, got '\(text)'") }
                clock.start = text
            }
        }
        if let zone = top["timeZone"] {
            timeZone = try zone.string()
            _ = try Scenario.timeZone(named: timeZone, zone)  // the scenario's rule: IANA names only
        }
        if let value = top["profile"] {
            profile = try value.string()
            guard ["faithful", "ios-realistic"].contains(profile) else { throw value.error("expected faithful or ios-realistic, got '\(profile)'") }
        }
        ios = try top["ios"]?.oneOf(IOSRelease.self)
        if let value = top["quirks"] {
            for (name, flag) in try value.uniqueMapping(allowed: Quirk.allCases.map(\.rawValue)) { quirks[name] = try flag.bool() }
        }
        if let value = top["seed"] {
            let number = try value.int()
            guard number >= 0 else { throw value.error("must be a non-negative integer") }
            seed = UInt64(number)
        }
        catalog = try top["catalog"]?.string()
        state = try top["state"]?.string()
        scenario = try top["scenario"]?.string()
        if let value = top["device"] {
            let fields = try value.uniqueMapping(allowed: ["companionApp", "companionPlugin", "managedSettingsOwner", "authorization",
                                                     "selection", "habits", "replyTimeoutMs", "clockTicks", "webLimits", "restrictedDomains"])
            device.companionApp = try fields["companionApp"]?.string()
            device.companionPlugin = try fields["companionPlugin"]?.string()
            device.managedSettingsOwner = try fields["managedSettingsOwner"]?.string()
            for (key, field) in fields { lines["device.\(key)"] = field.line }
            if let policy = fields["authorization"] {
                let word = try policy.string()
                guard DeviceSection.authorizationPolicies.contains(word) else {
                    throw policy.error("expected one of \(DeviceSection.authorizationPolicies.joined(separator: ", ")), got '\(word)'")
                }
                device.authorization = word
            }
            if let selection = fields["selection"] {
                let picked = try selection.uniqueMapping(allowed: ["apps", "categories", "domains"])
                device.selectionApps = try picked["apps"]?.stringList() ?? []
                device.selectionCategories = try picked["categories"]?.stringList() ?? []
                device.selectionDomains = try picked["domains"]?.stringList() ?? []
            }
            device.habits = try fields["habits"].map(Self.habitList)
            if let timeout = fields["replyTimeoutMs"] { device.replyTimeoutMs = Int64(try Self.positive(timeout)) }
            if let ticks = fields["clockTicks"] { device.clockTicks = try ticks.bool() }
            try parseWebContent(fields)
        }
        for entry in try top["appGroups"]?.list() ?? [] {
            let fields = try entry.uniqueMapping(allowed: ["name", "slices", "shared", "strictSlices"])
            guard let name = fields["name"] else { throw entry.error("an app group needs a 'name' (like group.dev.shieldbus.habitlock)") }
            var slices: [String: [String]] = [:]
            for (writer, patterns) in try fields["slices"]?.uniqueMapping() ?? [:] {
                slices[writer] = try patterns.stringList()
                lines["appGroups.\(try name.string()).slices.\(writer)"] = patterns.line
            }
            appGroups.append(AppGroupDeclaration(name: try name.string(), slices: slices, line: entry.line,
                                                 shared: try fields["shared"]?.stringList() ?? [],
                                                 strictSlices: try fields["strictSlices"]?.bool() ?? false))
        }
    }

    /// `device.webLimits: {instagram.com: 30}` and `device.restrictedDomains: [poki.com]`: hostnames, limits in
    /// whole minutes within a day.
    private mutating func parseWebContent(_ fields: [String: YAMLValue]) throws {
        func domain(_ value: YAMLValue, _ name: String) throws -> String {
            if let problem = hostnameProblem(name) { throw value.error(problem) }
            return name
        }
        for (name, minutes) in try fields["webLimits"]?.mapping() ?? [:] {
            let limit = try minutes.int()
            guard (1...1439).contains(limit) else { throw minutes.error("a web limit is 1 to 1439 minutes a day, got \(limit)") }
            device.webLimits[try domain(minutes, name)] = limit
        }
        for value in try fields["restrictedDomains"]?.list() ?? [] {
            device.restrictedDomains.append(try domain(value, try value.string()))
        }
    }

    /// A path written in this file, resolved against the file's folder.
    public func resolve(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL.path
    }

    /// Checks references between sections (plugin names, app names) once everything is read.
    public func validateReferences(catalog: AppCatalog) throws {
        let pluginNames = Set(plugins.map(\.name))
        func check(_ name: String?, _ key: String) throws {
            guard let name, !pluginNames.contains(name) else { return }
            let suggestion = closest(to: name, in: Array(pluginNames)).map { " — did you mean '\($0)'?" } ?? ""
            throw ConfigurationError(file: file, line: lines[key] ?? 0, column: 0, key: key, message: "no plugin named '\(name)' in plugins\(suggestion)")
        }
        try check(device.companionPlugin, "device.companionPlugin")
        try check(device.managedSettingsOwner, "device.managedSettingsOwner")
        for group in appGroups {
            for writer in group.slices.keys { try check(writer, "appGroups.\(group.name).slices.\(writer)") }
        }
        for (key, names) in [("device.companionApp", device.companionApp.map { [$0] } ?? []), ("device.selection", device.selectionApps)] {
            for name in names where catalog.app(named: name) == nil {
                let suggestion = closest(to: name, in: catalog.apps.map(\.name)).map { " — did you mean '\($0)'?" } ?? ""
                throw ConfigurationError(file: file, line: lines[key] ?? 0, column: 0, key: key, message: "no app named '\(name)' in the catalog \(catalog.file)\(suggestion)")
            }
        }
        for id in device.selectionCategories where catalog.category(id: id) == nil {
            throw ConfigurationError(file: file, line: lines["device.selection"] ?? 0, column: 0, key: "device.selection",
                                     message: "no category '\(id)' in the catalog (categories: \(catalog.categories.map(\.id).joined(separator: ", ")))")
        }
        for product in products {
            let key = "products.\(product.name)"
            for name in (product.companionApp.map { [$0] } ?? []) + product.selectionApps where catalog.app(named: name) == nil {
                let suggestion = closest(to: name, in: catalog.apps.map(\.name)).map { " — did you mean '\($0)'?" } ?? ""
                throw ConfigurationError(file: file, line: lines[key] ?? 0, column: 0, key: key, message: "no app named '\(name)' in the catalog \(catalog.file)\(suggestion)")
            }
            for id in product.selectionCategories where catalog.category(id: id) == nil {
                throw ConfigurationError(file: file, line: lines[key] ?? 0, column: 0, key: key, message: "no category '\(id)' in the catalog")
            }
        }
    }
}
