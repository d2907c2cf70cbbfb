import BusProtocol
import Configuration
import DeviceAPI
import Foundation
import LockInvariant
import ScreenTime

/// Writes small journals by hand: the OS's events at local times, as the device OS would journal them.
struct JournalBuilder {
    var zone: TimeZone
    var epoch = 0
    private(set) var envelopes: [Envelope] = []

    /// `quirks`: the device behaviours the OS plays, as the broker's `bus.started` names them (none if not given).
    init(zone: String = "Europe/Berlin", start: String, quirks: [String]? = nil) {
        self.zone = TimeZone(identifier: zone)!
        var started: [String: JSONValue] = ["clock": "virtual"]
        if let quirks { started["quirks"] = .array(quirks.map { .string($0) }) }
        add(start, "bus.started", .object(started))
    }

    /// "2026-11-23 09:00[:SS]" in the builder's zone, or an instant in UTC ending in "Z".
    func instant(_ text: String) -> Date {
        if text.hasSuffix("Z") { return Self.parse(String(text.dropLast()), in: TimeZone(identifier: "UTC")!) }
        return Self.parse(text, in: zone)
    }

    static func parse(_ text: String, in zone: TimeZone) -> Date {
        let parts = text.split(whereSeparator: { " -:T".contains($0) }).map { Int($0)! }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: parts[3], minute: parts[4], second: parts.count > 5 ? parts[5] : 0))!
    }

    static func token(_ kind: String, _ name: String, epoch: Int) -> String { "\(kind).\(epoch).\(name)" }

    mutating func add(_ time: String, _ topic: String, _ body: JSONValue, source: String = "broker") {
        add(instant(time), topic, body.jsonBytes, source: source)
    }

    mutating func add(_ date: Date, _ topic: String, _ body: [UInt8], source: String = "broker") {
        envelopes.append(Envelope(seq: UInt64(envelopes.count + 1), time: busTime(date), topic: topic, source: source, body: body))
    }

    func app(_ name: String, category: String? = nil) -> JSONValue {
        var body: [String: JSONValue] = ["application": ["localizedDisplayName": .string(name), "token": .string(Self.token("app", name, epoch: epoch))]]
        if let category { body["category"] = ["localizedDisplayName": .string(category), "token": .string(Self.token("cat", category, epoch: epoch))] }
        return .object(body)
    }

    static func adding(_ fields: [String: JSONValue], to body: JSONValue) -> JSONValue {
        guard case .object(var members) = body else { return body }
        members.merge(fields) { $1 }
        return .object(members)
    }

    func domain(_ host: String) -> JSONValue {
        ["webDomain": ["domain": .string(host), "token": .string(Self.token("web", host, epoch: epoch))]]
    }

    mutating func open(_ time: String, _ name: String, category: String? = nil, source: String = "broker") {
        add(time, DeviceTopic.appOpened, Self.adding(["reason": "user"], to: app(name, category: category)), source: source)
    }

    mutating func close(_ time: String, _ name: String, category: String? = nil, source: String = "broker") {
        add(time, DeviceTopic.appClosed, Self.adding(["reason": "close"], to: app(name, category: category)), source: source)
    }

    mutating func visit(_ time: String, _ host: String, isPrivate: Bool = false) {
        add(time, DeviceTopic.webVisited, Self.adding(["isPrivate": .bool(isPrivate)], to: domain(host)))
    }

    mutating func leave(_ time: String, _ host: String) {
        add(time, DeviceTopic.webLeft, domain(host))
    }

    mutating func shield(_ time: String, _ target: JSONValue, stores: [String] = ["lock"], renderedBy: String = "shield") {
        add(time, DeviceTopic.shieldShown, ["target": target, "stores": .array(stores.map { .string($0) }), "entryPoint": "application", "renderedBy": .string(renderedBy)])
    }

    mutating func dismiss(_ time: String, _ name: String) {
        add(time, DeviceTopic.shieldDismissed, ["target": .string(name), "reason": "home"])
    }

    mutating func press(_ time: String, _ action: ShieldAction, on name: String) {
        add(time, DeviceTopic.actionHandled, ["action": .string(action.rawValue), "target": .string(name), "response": "defer", "decidedBy": "action"])
    }

    mutating func habits(_ time: String, _ names: [String] = ["Read", "Walk", "Stretch"]) {
        for name in names { add(time, DeviceTopic.habitCompleted, ["habit": .string(name)]) }
    }

    /// The person taps a control of a product's app.
    mutating func appAction(_ time: String, _ action: String, app: String = "Bedtime") {
        add(time, DeviceTopic.appAction, ["app": .string(app), "action": .string(action)])
    }

    /// A store write as the OS applied it: these apps shielded, in tokens of `epoch` (the writer's, maybe stale).
    mutating func store(_ time: String, _ store: String = "lock", apps: [String], writer: String, epoch tokenEpoch: Int? = nil) {
        let tokens = Set(apps.map { ApplicationToken(rawValue: Self.token("app", $0, epoch: tokenEpoch ?? epoch)) })
        let change = ManagedSettingsChanged(store: store, shield: ShieldSettings(applications: tokens.isEmpty ? nil : tokens), writer: writer)
        add(instant(time), DeviceTopic.settingsChanged, DeviceAPICoding.encode(change))
    }

    mutating func osUpdate(_ time: String) {
        epoch += 1
        add(time, DeviceTopic.osUpdated, ["tokenEpoch": .int(Int64(epoch))])
    }

    mutating func timeZone(_ time: String, _ name: String) {
        add(time, "device.time-zone-changed", ["timeZone": .string(name)])
    }

    /// The monitor's `start-monitoring` request, with a threshold event or without (a check's window), and the OS's
    /// reply: refused for the activity limit, or done.
    mutating func register(_ time: String, withThreshold: Bool, refused: Bool) {
        let corr = "monitor-\(envelopes.count)"
        let events: JSONValue = withThreshold ? ["limit": ["applications": [], "threshold": ["minute": 20]]] : [:]
        let reply: JSONValue = refused ? ["ok": false, "error": ["code": "excessive-activities", "message": "the limit of 20"]] : ["ok": true, "value": [:]]
        for (topic, body, source) in [(DeviceTopic.startMonitoringRequest, JSONValue.object(["activity": "daily", "events": events]), "monitor"),
                                      (DeviceTopic.startMonitoringReply, reply, "broker")] {
            envelopes.append(Envelope(seq: UInt64(envelopes.count + 1), time: busTime(instant(time)), topic: topic, source: source, corr: corr,
                                      body: body.jsonBytes))
        }
    }

    /// `requester`'s authorization request and the OS's reply with `status`.
    mutating func authorizationRequest(_ time: String, by requester: String, answered status: String) {
        let corr = "\(requester)-\(envelopes.count)"
        for (topic, body, source) in [(DeviceTopic.authorizationRequest, JSONValue.object(["member": "individual"]), requester),
                                      (DeviceTopic.authorizationReply, ["ok": true, "value": ["status": .string(status)]], "broker")] {
            envelopes.append(Envelope(seq: UInt64(envelopes.count + 1), time: busTime(instant(time)), topic: topic, source: source, corr: corr,
                                      body: body.jsonBytes))
        }
    }

    /// The OS announces a new authorization status (the person's answer, or a revocation in Settings).
    mutating func authorizationChanged(_ time: String, _ status: String) {
        add(time, DeviceTopic.authorizationChanged, ["status": .string(status)])
    }

    mutating func end(_ time: String) {
        add(time, DeviceTopic.scenarioEnded, [:])
    }
}

/// The products of the tests, built as a configuration would give them.
enum Products {
    static func habitLock(_ name: String = "habit-lock", store: String = "lock", unlockMinutes: Int = 30) -> ProductRules {
        var promise = Promise(line: 0)
        promise.locked.always = true
        promise.unlocks = [Promise.Unlock(earned: .habits(3), minutes: unlockMinutes)]
        var rules = ProductRules(name: name, promise: promise)
        rules.selectedApps = ["Instagram", "TikTok"]
        rules.selectedCategories = ["Games"]
        rules.selectedDomains = ["instagram.com"]
        rules.stores = [store]
        return rules
    }

    static func focusWindow(_ hours: [(String, String)], store: String = "lock") -> ProductRules {
        var promise = Promise(line: 0)
        promise.locked.windows = hours.map { Promise.Window(start: Int(seconds($0.0)), end: Int(seconds($0.1))) }
        var pass = Promise.Pass(button: .secondary, minutes: 5)
        pass.appsOnly = true
        promise.passes = [pass]
        var rules = ProductRules(name: "focus-window", promise: promise)
        rules.selectedApps = ["Instagram", "TikTok"]
        rules.selectedDomains = ["instagram.com"]
        rules.stores = [store]
        return rules
    }

    static func speedBump(store: String = "lock", thresholdMinutes: Int = 20, cooldownMinutes: Int = 15) -> ProductRules {
        var promise = Promise(line: 0)
        var use = Promise.DailyUse(minutes: thresholdMinutes)
        use.dismiss = .primary
        use.cooldownMinutes = cooldownMinutes
        promise.locked.dailyUse = use
        var rules = ProductRules(name: "speed-bump", promise: promise)
        rules.selectedApps = ["Instagram", "Facebook"]
        rules.selectedDomains = ["instagram.com"]
        rules.stores = [store]
        return rules
    }

    /// A product of the tests with a promise written as a configuration would (`promise:`'s YAML), Bedtime's app.
    static func promised(_ yaml: String, name: String = "bedtime") throws -> ProductRules {
        let configuration = try ShieldBusConfiguration.parse(YAMLValue.parse("promise: " + yaml + "\n", file: "promise.yml"))
        var rules = ProductRules(name: name, promise: configuration.promise!)
        rules.selectedApps = ["Instagram", "TikTok"]
        rules.selectedDomains = ["instagram.com"]
        rules.stores = ["lock"]
        rules.companionApp = "Bedtime"
        return rules
    }

    static func seconds(_ text: String) -> Double {
        let parts = text.split(separator: ":").map { Double($0)! }
        return parts[0] * 3600 + parts[1] * 60
    }
}
