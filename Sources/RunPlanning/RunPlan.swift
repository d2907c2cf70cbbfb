// RunPlan: what `shieldbus run` derives from its options and a configuration — the broker's settings, the clock, the
// device, the scenario, the checks — as a library, so that a test can plan the same run and play it in its own process.
import AppGroupStore
import Broker
import BusClient
import BusProtocol
import Configuration
import DeviceAPI
import DeviceOS
import Explore
import Foundation
import LockInvariant
import SQLite
import ZeroMQ

/// The options of one `shieldbus run`, as its command line gives them (nil: the configuration's, or the default).
public struct RunOptions {
    public var config: String?
    public var runtimeDir: String?
    public var endpoint: String?
    public var journal: String?
    public var scenario: String?
    public var noScenario = false
    public var clock: String?
    public var speed: Double?
    public var profile: String?
    public var ios: String?
    public var seed: UInt64?
    public var stateDir: String?
    public var keepState = false
    public var resetState = false
    public var resume = false
    public var crashAtStep: Int?
    public var crashBeforeSaving: String?
    public var crashAfterSaving: String?
    public var crashOccurrence = 1
    public var noSandbox = false
    public var plainLaunches = false

    public init() {}
}

/// A configuration and its catalog, read and checked against each other.
public struct LoadedConfiguration {
    /// The file as it was named.
    public let path: String
    public let configuration: ShieldBusConfiguration
    public let catalog: AppCatalog

    public init(path: String) throws {
        self.path = path
        configuration = try ShieldBusConfiguration.load(path: path)
        catalog = try DefaultFiles.catalog(for: configuration)
        try configuration.validateReferences(catalog: catalog)
    }
}

/// Everything `run` derives from its options and the configuration, checked before anything starts.
public struct RunPlan {
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
    }

    public let configuration: ShieldBusConfiguration
    public let catalog: AppCatalog
    public let brokerSettings: BrokerSettings
    public let clock: BusClock
    public let device: DeviceOS
    public let scenario: Scenario?
    public let timeZone: TimeZone
    /// A plugin's own container folder in the state folder, made its home: Foundation's `UserDefaults.standard`, caches and
    /// anything else a plugin keeps under `$HOME` stay with the device (fresh with it) and never reach the user's home.
    /// Refuses a plugin's `readable:` or `writable:` path that is or lies in the device's state folder or the runtime
    /// folder (its links followed): shown over their hiding, it would show the plugin every App Group, every record or
    /// the cookie, which its sandbox keeps to their owners. (A folder that holds them is shown with them hidden.)
    static func refuseDeviceFolders(given declaration: ShieldBusConfiguration.PluginDeclaration, stateDirectory: String, runtimeDirectory: String) throws {
        // Nothing to compare (the usual plugin): the device's folders are not resolved, which reads the file system.
        guard !declaration.readable.isEmpty || !declaration.writable.isEmpty else { return }
        func real(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path }
        let device = [real(stateDirectory), real(runtimeDirectory)]
        for (key, paths) in [("readable", declaration.readable), ("writable", declaration.writable)] {
            for path in paths {
                let given = real(path)
                if let folder = device.first(where: { given == $0 || given.hasPrefix($0 + "/") }) {
                    throw Problem(description: "plugin '\(declaration.name)': its \(key): path \(path) is in \(folder), the device's own (its state or runtime folder); a plugin is shown its own container, App Groups and record already — name a folder outside them")
                }
            }
        }
    }

    static func container(of plugin: String, in stateDirectory: String) throws -> [String: String] {
        let path = stateDirectory + "/containers/" + plugin
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw Problem(description: "cannot make the container of plugin '\(plugin)' (\(path)): \(error)")
        }
        return ["HOME": path, "XDG_CONFIG_HOME": path + "/.config", "XDG_DATA_HOME": path + "/.local/share", "XDG_CACHE_HOME": path + "/.cache"]
    }

    /// Taken before the state folder is touched, so a second broker changes nothing.
    public let runtimeLock: RuntimeLock
    public let stateLock: StateDirectoryLock
    /// The lock invariant of every product the configuration runs.
    public let checker: LockInvariantChecker
    /// Checks the scenario's `expect:` entries; App-Group values are read from the run's state folder.
    public let expectationCheck: ExpectationCheck

    /// `loaded`: the configuration already read from the same file (by explore's broker template, for each day it forks).
    /// `kept`: an explore worker's sandboxes and launch templates (explore's broker template), used when this run is a
    /// fresh day on the folders and endpoint they were made for.
    public init(options: RunOptions, loaded: LoadedConfiguration? = nil, kept: KeptLaunchTemplates? = nil) throws {
        let path = try DefaultFiles.configurationPath(options.config)
        let read = try loaded.flatMap { $0.path == path ? $0 : nil } ?? LoadedConfiguration(path: path)
        configuration = read.configuration
        let catalog = read.catalog
        self.catalog = catalog
        guard let configuredZone = TimeZone(identifier: configuration.timeZone) else { throw Problem(description: "unknown time zone \(configuration.timeZone)") }

        let scenarioPath = options.noScenario ? nil : (options.scenario ?? configuration.scenario.map(configuration.resolve))
        let habits = OfferedHabits(configuration: configuration, catalog: catalog)
        scenario = try scenarioPath.map { try Scenario.load(path: $0, catalog: catalog, habits: habits, defaultTimeZone: configuredZone) }
        timeZone = scenario?.resolvedTimeZone ?? configuredZone
        checker = try LockInvariantChecker(configuration: configuration, catalog: catalog, timeZone: timeZone, models: DefaultFiles.promiseModels)

        // Clock: options, then the configuration; a scenario defaults to virtual time starting at its start.
        let modeName = options.clock ?? (scenario != nil && options.clock == nil && configuration.clock.mode == "real" ? "virtual" : configuration.clock.mode)
        let mode: ClockMode
        switch modeName {
        case "real": mode = .real
        case "scaled": mode = .scaled(speed: options.speed ?? configuration.clock.speed)
        case "virtual": mode = .virtual
        default: throw Problem(description: "--clock must be real, scaled or virtual, not '\(modeName)'")
        }
        if mode == .virtual && scenario == nil {
            throw Problem(description: "virtual time needs a scenario to play (--scenario FILE): with nothing scheduled it would race ahead forever")
        }
        let start: Date? = configuration.clock.start.flatMap(LocalDateTime.init(parsing:)).map { $0.resolve(in: configuredZone) } ?? scenario?.start

        // Fidelity.
        let profileName = options.profile ?? scenario?.profile ?? configuration.profile
        guard let profile = Fidelity.Profile(rawValue: profileName) else { throw Problem(description: "--profile must be faithful or ios-realistic, not '\(profileName)'") }
        // The names were checked at load (with their line); only known ones remain.
        let overrides = Dictionary(uniqueKeysWithValues: configuration.quirks.compactMap { name, on in Quirk(rawValue: name).map { ($0, on) } })
        let release = try options.ios.map(Self.release(named:)) ?? scenario?.ios ?? configuration.ios
        let fidelity = Fidelity(profile: profile, release: release, overrides: overrides, seed: options.seed ?? scenario?.seed ?? configuration.seed)

        // Broker.
        let runtime = RuntimeDirectory.resolve(options.runtimeDir)
        var settings = BrokerSettings(runtimeDirectory: runtime, endpoint: options.endpoint, table: .screenTime)
        do {
            if try BusEndpoint(settings.bindEndpoint).needsCurve {
                guard Curve.isAvailable else { throw Problem(description: "\(ListenError.curveUnavailable(libzmqVersion: libzmqVersion))") }
                settings.curve = try CurveAdmission(configuration: configuration)
            }
        } catch let error as BusEndpointError {
            throw Problem(description: "--endpoint: \(error)")
        }
        settings.maximumBodyBytes = configuration.bus.maxBodyBytes
        settings.heartbeatMilliseconds = configuration.bus.heartbeatMs
        settings.sessionTimeoutMilliseconds = configuration.bus.sessionTimeoutMs
        settings.deliveryHighWaterMark = configuration.bus.highWaterMark
        settings.acknowledgementTimeoutMilliseconds = configuration.bus.ackTimeoutMs
        settings.startupTimeoutMilliseconds = configuration.bus.startupTimeoutMs
        settings.deliveryLogLimit = configuration.bus.deliveryLogLimit
        settings.journalPath = options.journal ?? configuration.journal
        var forPlugins: [String: JSONValue] = [
            "timeZone": .string(timeZone.identifier), "configuration": .string(configuration.name),
            "profile": .string(profile.rawValue), "quirks": .array(fidelity.quirks.map(\.rawValue).sorted().map(JSONValue.string)),
        ]
        // Named only when a release is played: a run without one journals what it always did.
        if let release { forPlugins["ios"] = .string(release.rawValue) }
        settings.settingsForPlugins = .object(forPlugins)

        // State: the device's own store and the app groups' stores.
        let stateDirectory = options.stateDir.map(RuntimeDirectory.absolute) ?? configuration.state.map(configuration.resolve) ?? runtime.path + "/state"
        if options.resetState && options.keepState { throw Problem(description: "--reset-state and --keep-state contradict each other; choose one") }
        if options.resume && (scenario == nil || options.resetState) {
            throw Problem(description: "--resume continues a scenario on its state folder: it needs --scenario (or the configuration's scenario) and contradicts --reset-state")
        }
        let fresh = (scenario != nil && !options.keepState && !options.resume) || options.resetState
        let keeps = kept.flatMap { fresh && $0.serves(runtimeDirectory: runtime.path, stateDirectory: stateDirectory, endpoint: settings.bindEndpoint) ? $0 : nil }
        if let keeps {
            // Emptied, not made anew: the kept sandboxes bound its folders (and what an earlier day left is gone).
            do {
                try keeps.prepareDay()
            } catch {
                throw Problem(description: "cannot empty the folders of the explore worker's day: \(error)")
            }
            settings.keptLaunchTemplates = keeps
        }
        runtimeLock = try RuntimeLock(runtime)
        stateLock = try StateDirectoryLock(stateDirectory)
        try runtimeLock.publishStateDirectory(stateDirectory)
        if let journal = settings.journalPath { try runtimeLock.publishJournal(journal) }
        try RunPlan.prepareState(stateDirectory, fresh: fresh && keeps == nil, groups: configuration.appGroups.map(\.name))
        let progress = try options.resume ? RunPlan.progress(of: scenario, in: stateDirectory) : nil
        // A resumed scenario's clock goes on at the step it had not played (virtual time; a scaled clock also
        // resumes from the delivery store's time).
        let clockStart = start.map(busTime).map { max($0, progress?.time ?? $0) }
        clock = BusClock(mode: mode, start: mode == .real ? nil : clockStart)
        settings.journalAppends = options.resume
        settings.crashPoint = options.crashBeforeSaving.map(CrashPoint.beforeSaving) ?? options.crashAfterSaving.map(CrashPoint.afterSaving)
        settings.crashOccurrence = options.crashOccurrence
        settings.deliveryStorePath = stateDirectory + "/" + StateFiles.deliveryStore
        let container = AppGroupContainer(rootPath: stateDirectory + "/" + StateFolder.appGroups)
        let groups = configuration.appGroups.map(\.name)
        expectationCheck = ExpectationCheck(timeZone: timeZone) { group, key in
            guard let name = group ?? (groups.count == 1 ? groups[0] : nil) else {
                throw Problem(description: "the configuration has \(groups.count) app groups (\(groups.joined(separator: ", "))): name one with 'appGroup'")
            }
            let entry = try SharedDefaults(suiteName: name, container: container, writer: nil).entry(forKey: key)
            return try entry.map { try JSONValue(parsing: $0.rawJSON) }
        }
        if !options.noSandbox && !configuration.plugins.isEmpty {
            do {
                settings.sandbox = .bubblewrap(path: try PluginSandbox.locateBubblewrap())
            } catch {
                throw Problem(description: "\(error)")
            }
        }
        settings.launchTemplates = !options.plainLaunches && ProcessEnvironment.value(of: "SHIELDBUS_PLAIN_LAUNCHES") != "1"
        settings.plugins = try Self.pluginSpecs(configuration: configuration, stateDirectory: stateDirectory, runtime: runtime,
                                                shortLivedExtensions: fidelity.has(.shortLivedExtensions))
        let launchedAgain = Self.pluginsLaunchedAgain(by: scenario, products: configuration.resolvedProducts, all: settings.plugins.map(\.name))
        for index in settings.plugins.indices { settings.plugins[index].launchedAgain = launchedAgain.contains(settings.plugins[index].name) }
        if let clients = configuration.clients {
            settings.outsideClients = clients.map { ClientGrant(name: $0.name, roles: $0.roles, namespaces: $0.namespaces) }
        }

        // The App Groups' stores are made beside the device's (`GroupStoresMaking`), and waited for before the plan is
        // done, whatever it ends with — except in a day forked from a broker template (`loaded` is its reading), whose
        // folder is in memory by default (`DayFolders`): made in place (`GroupStoresMaking.init`).
        let groupStores = GroupStoresMaking(container: container, groups: configuration.appGroups, onAThread: loaded == nil)
        defer { _ = try? groupStores.finish() }

        // The device.
        var deviceSettings = DeviceSettings(timeZone: timeZone, fidelity: fidelity)
        // Several products share the device: each keeps to its own plugins (one alone keeps to all of them).
        let products = configuration.resolvedProducts
        deviceSettings.products = products.map { declared in
            var product = DeviceProduct(name: declared.name, plugins: products.count > 1 ? Set(declared.plugins) : nil)
            product.companionApp = declared.companionApp.flatMap(catalog.app(named:))
            product.companionPluginName = declared.companionPlugin
            product.storeOwners = Dictionary(uniqueKeysWithValues: declared.stores.compactMap { store in store.owner.map { (store.name, $0) } })
            product.selection = .init(apps: declared.selectionApps, categories: declared.selectionCategories, domains: declared.selectionDomains)
            product.habits = declared.habits
            return product
        }
        deviceSettings.managedSettingsOwner = configuration.device.managedSettingsOwner
        deviceSettings.authorization = DeviceSettings.AuthorizationPolicy(rawValue: configuration.device.authorization) ?? .approve
        deviceSettings.replyTimeoutMilliseconds = configuration.device.replyTimeoutMs
        deviceSettings.clockTicks = configuration.device.clockTicks
        deviceSettings.webLimits = configuration.device.webLimits
        deviceSettings.restrictedDomains = configuration.device.restrictedDomains
        // The groups' stores are said first when both they and the device's are wrong, as they are made first.
        let madeDevice: Result<DeviceOS, any Error>
        do {
            madeDevice = .success(try DeviceOS(settings: deviceSettings, catalog: catalog, statePath: stateDirectory + "/device.sqlite",
                                               scenario: scenario, resuming: progress, crashAtStep: options.crashAtStep))
        } catch {
            madeDevice = .failure(error)
        }
        settings.storeLosses += try groupStores.finish()
        device = try madeDevice.get()
        if let loss = device.restartLoss { settings.storeLosses.insert(loss, at: 0) }
        brokerSettings = settings
    }

    /// The plugins `scenario` launches again: every one at a device restart, a product's companion plugin when its app
    /// is force-quit.
    static func pluginsLaunchedAgain(by scenario: Scenario?, products: [ProductDeclaration], all: [String]) -> Set<String> {
        var names: Set<String> = []
        for step in scenario?.steps ?? [] {
            switch step.action {
            case .restart: return Set(all)
            case .forceQuit(let app):
                for product in products where product.companionApp == app.name {
                    if let plugin = product.companionPlugin { names.insert(plugin) }
                }
            default: break
            }
        }
        return names
    }

    /// The configuration's plugins as a run on `runtime` and `stateDirectory` starts them, with the folders each is
    /// given made (its container, record and App Groups, the options folder) and its options file written (in place;
    /// left as it is when it holds the same bytes, so that a sandbox kept across explored days, which bound it, sees
    /// this day's). Explore's broker template plans its kept sandboxes with it too, before any day's plan.
    public static func pluginSpecs(configuration: ShieldBusConfiguration, stateDirectory: String, runtime: RuntimeDirectory,
                                   shortLivedExtensions: Bool) throws -> [PluginSpec] {
        let membership = configuration.pluginAppGroups
        let container = AppGroupContainer(rootPath: stateDirectory + "/" + StateFolder.appGroups)
        try FileManager.default.createDirectory(atPath: runtime.optionsPath, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return try configuration.plugins.map { declaration in
            try Self.refuseDeviceFolders(given: declaration, stateDirectory: stateDirectory, runtimeDirectory: runtime.path)
            let groups = membership[declaration.name] ?? []
            let groupFolders = try groups.map(container.groupFolder)
            // Made before a sandbox shows them (a folder it was not shown would be the sandbox's own, and lost with it).
            let cursorFolder = stateDirectory + "/" + StateFolder.cursorFolder(plugin: declaration.name)
            for folder in [cursorFolder] + groupFolders {
                do {
                    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                } catch {
                    // A link planted at a group's folder (dangling, so not followed) fails here, before the group's
                    // store is made: said as its store's opens say it.
                    for group in groups { try container.refuseSymbolicLinks(group: group) }
                    throw error
                }
            }
            let pluginEnvironment = ["SHIELDBUS_STATE_DIR": stateDirectory, "SHIELDBUS_APP_GROUPS": groups.joined(separator: ",")]
            let optionsFile = runtime.optionsPath + "/\(declaration.name).json"
            // Written in place, not through FileManager's atomic write (a temporary file, an fsync, a rename): the
            // runtime folder is this run's alone and no plugin reads the file before it is started, so the fsyncs
            // would cost every explored day and buy nothing.
            let options = String(decoding: declaration.options.jsonBytes, as: UTF8.self)
            if FileManager.default.contents(atPath: optionsFile) != Data(options.utf8) {
                do {
                    try PrivateFile.write(options, to: optionsFile)
                } catch {
                    throw Problem(description: "cannot write the options of plugin '\(declaration.name)': \(error)")
                }
            }
            return PluginSpec(name: declaration.name, executable: try DefaultFiles.executablePath(declaration.executable, for: declaration.name),
                       arguments: declaration.arguments,
                       // The broker's own variables win: a configuration cannot point a plugin at another state folder.
                       environment: declaration.environment.merging(pluginEnvironment) { _, broker in broker }
                           .merging(try Self.container(of: declaration.name, in: stateDirectory)) { _, container in container }
                           .merging(["SHIELDBUS_PLUGIN_OPTIONS_FILE": optionsFile]) { _, options in options },
                       role: declaration.role, restart: RestartPolicy(rawValue: declaration.restart) ?? .onFailure,
                       ephemeral: shortLivedExtensions && [.monitor, .shield, .action].contains(declaration.role),
                       namespaces: declaration.namespaces,
                       // Its own container, record and App Groups: never another plugin's or another product's.
                       files: PluginFiles(own: [stateDirectory + "/containers/" + declaration.name, cursorFolder] + groupFolders,
                                          writable: declaration.writable,
                                          readable: [optionsFile] + declaration.readable, hidden: [stateDirectory]),
                       personInput: declaration.personInput, offline: declaration.role.runsWithoutNetwork)
        }
    }

    /// `--ios`'s release: one of `IOSRelease`, or `none` (nil: no release, whatever the scenario or configuration says).
    static func release(named name: String) throws -> IOSRelease? {
        if name == "none" { return nil }
        if let release = IOSRelease(rawValue: name) { return release }
        let suggestion = closest(to: name, in: IOSRelease.names).map { " — did you mean '\($0)'?" } ?? ""
        throw Problem(description: "--ios must be one of \(IOSRelease.names.joined(separator: ", ")) or none, not '\(name)'\(suggestion)")
    }

    /// Hands `body` the envelopes in the first `keptBytes` of a journal file (none without one): what the broker,
    /// reopening it to resume, kept of the previous runs' (`Broker.whenJournalOpened`) — whole lines, none past its
    /// last save. A bad line among them is a damaged journal, which a resumed run's check would otherwise judge
    /// without what follows it.
    public static func journaledSoFar(_ path: String?, keptBytes: UInt64, _ body: (Envelope) -> Void) throws {
        guard let path, keptBytes > 0 else { return }
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            let kept = try handle.read(upToCount: Int(keptBytes)) ?? Data()
            guard kept.count == Int(keptBytes) else {
                throw Problem(description: "cannot resume: the journal \(path) holds \(kept.count) bytes, not the \(keptBytes) the broker kept of it — another process changed it")
            }
            try JournalLines.forEachUpToATornEnd(in: Array(kept), body)
        } catch let problem as Problem {
            throw problem
        } catch let bad as JournalLines.BadLine {
            throw Problem(description: "cannot resume: the journal \(path) is damaged at \(bad) — a resumed run is checked with what the journal holds; start the run afresh (without --resume) or restore the journal")
        } catch {
            throw Problem(description: "cannot resume: cannot read the journal \(path): \(error.localizedDescription)")
        }
    }

    /// Where `scenario` stopped on the state folder `directory`; a folder where it was not played is refused.
    static func progress(of scenario: Scenario?, in directory: String) throws -> ScenarioProgress {
        guard let scenario else { throw Problem(description: "--resume needs a scenario") }
        guard let progress = try DeviceOS.scenarioProgress(statePath: directory + "/device.sqlite") else {
            throw Problem(description: "--resume: no scenario was played on the state folder \(directory); nothing to resume (run it without --resume)")
        }
        guard progress.scenario == scenario.name else {
            throw Problem(description: "--resume: the state folder \(directory) was playing scenario '\(progress.scenario)', not '\(scenario.name)'")
        }
        return progress
    }

    /// Creates the state folder (its lock held); a fresh run removes the previous run's device and app-group
    /// state. A kept app-group store that is empty is refused: it would otherwise start as a new, empty group.
    static func prepareState(_ directory: String, fresh: Bool, groups: [String]) throws {
        let files = FileManager.default
        if fresh, files.fileExists(atPath: directory) {
            for name in (try? files.contentsOfDirectory(atPath: directory)) ?? [] where StateFiles.isDeviceState(name) {
                try files.removeItem(atPath: directory + "/" + name)
            }
        }
        // Stores and journals hold the App-Group keys and the person's day: the owner's alone.
        try PrivateDirectory.claim(directory, what: "state folder")
        let container = AppGroupContainer(rootPath: directory + "/" + StateFolder.appGroups)
        try container.moveFlatStoresIntoGroupFolders()
        try HandledEventsRecords.moveFlatRecordsIntoPluginFolders(in: directory)
        for group in groups {
            let path = try container.storeURL(forGroup: group).path
            if FileSize.of(path) == 0 {
                throw AppGroupStoreError.corruptStore(path: path, detail: "the file is empty (0 bytes); restore it from a backup, or start a fresh device deliberately with --reset-state")
            }
        }
        try PrivateDirectory.claim(container.rootPath, what: "app-group folder")
        // Deep enough for a group's store (`appgroups/<group>/Library/Preferences/`).
        PrivateDirectory.restrictFiles(in: directory, depth: 4)
    }
}
