// DeviceOS: the simulated iOS inside the broker — tokens, authorization, ManagedSettings enforcement,
// shields, DeviceActivity scheduling, app lifecycle, notifications, the clock's ticks and scenario playback.
// Why one file near 500 lines: it is the composition root of those parts (each in its own file) and the one place
// the person's actions are turned into their calls; the parts' own work lives in their files.

import Broker
import BusProtocol
import Configuration
import DeviceAPI
import Foundation
import Logging
import ScreenTime

/// How the simulated device is set up (the `device:` part of a configuration).
public struct DeviceSettings {
    public var timeZone: TimeZone
    public var fidelity: Fidelity
    /// The products on the device, in the configuration's order (which also decides whose extensions draw and
    /// answer a shield that several products' stores put up).
    public var products: [DeviceProduct] = []
    /// The only plugin allowed to remove shields from a store no product names an owner for (nil: any plugin).
    public var managedSettingsOwner: String?
    /// How the person answers the authorization request.
    public var authorization: AuthorizationPolicy = .approve
    /// Wall time the OS waits for the shield renderer and the action delegate before falling back.
    public var replyTimeoutMilliseconds: Int64 = 1_000
    /// The clock's events: `clock.tick` every whole minute (while a plugin takes them) and `clock.day-changed`.
    public var clockTicks = true
    /// Screen Time's own web limits: domain (and its subdomains) → minutes of public browsing a day.
    public var webLimits: [String: Int] = [:]
    /// Content & Privacy Restrictions: domains (and their subdomains) that cannot be browsed.
    public var restrictedDomains: [String] = []

    public enum AuthorizationPolicy: String, CaseIterable, Sendable {
        case approve, deny, ask
    }

    /// Names picked in the FamilyActivityPicker (apps by name or bundle id, category ids, domains).
    public struct PickerChoice: Equatable {
        public var apps: [String] = []
        public var categories: [String] = []
        public var domains: [String] = []
        public init(apps: [String] = [], categories: [String] = [], domains: [String] = []) {
            self.apps = apps
            self.categories = categories
            self.domains = domains
        }
    }

    public init(timeZone: TimeZone, fidelity: Fidelity) {
        self.timeZone = timeZone
        self.fidelity = fidelity
    }
}

/// The device OS: one broker service that owns the device's state and changes it only in response to
/// bus events, scenario steps and its own timers. Its parts each own one slice of that state.
public final class DeviceOS: BrokerService {
    let settings: DeviceSettings
    let catalog: AppCatalog
    let logger: Logger
    /// Schedule math in the time zone in force.
    var calendar: ScheduleCalendar { clock.calendar }
    var random: SeededRandom
    private(set) var bus: (any ServiceBus)!
    let state: DeviceStateStore
    let tokens: TokenIssuer

    private(set) var authorization: AuthorizationService!
    private(set) var managedSettings: ManagedSettingsService!
    private(set) var screen: Screen!
    private(set) var activity: DeviceActivityService!
    private(set) var usage: UsageMeter!
    private(set) var lifecycle: AppLifecycle!
    private(set) var notifications: NotificationCenterService!
    private(set) var webContent: WebContentFilter!
    private(set) var clock: DeviceClock!
    private var scenario: ScenarioPlayer?
    /// The zone the device was switched on in, when it differs from the one its state last ran in (applied once ready).
    private var switchedOnIn: TimeZone?
    private var correlation: UInt64 = 0
    /// A retry of what could not be saved is planned (`retryUnsavedSoon`).
    var retryingUnsaved = false
    /// Tools' inputs waiting for the plugins to handle them.
    private lazy var inputs = InputConfirmations(device: self)

    public let subscriptions = [
        "shield.configuration.reply", "shield.action.reply", "managedsettings.", "deviceactivity.", "familycontrols.",
        "app.", "notification.post.request", "input.", Topic.writeFailed, Topic.callFailed, Topic.multipleWriters,
    ]

    /// Creates the device from its settings, catalog and persistent state (`statePath`, a SQLite file).
    /// `resuming`: the scenario goes on where a killed broker left it (`scenarioProgress(statePath:)`);
    /// `crashAtStep`: for fault tests, the broker kills itself when that step is due.
    public init(settings: DeviceSettings, catalog: AppCatalog, statePath: String, scenario: Scenario? = nil,
                resuming: ScenarioProgress? = nil, crashAtStep: Int? = nil,
                logger: Logger = Logger(label: "shieldbus.device")) throws {
        self.settings = settings
        self.catalog = catalog
        self.logger = logger
        random = SeededRandom(seed: settings.fidelity.seed)
        state = try DeviceStateStore(path: statePath)
        tokens = TokenIssuer(seed: settings.fidelity.seed, epoch: try state.load(Int.self, key: "tokens.epoch") ?? 0)
        tokens.issueAll(for: catalog)
        if let scenario { self.scenario = ScenarioPlayer(scenario: scenario, resumeAt: resuming, crashAtStep: crashAtStep) }
        // Every stored value is read now, before anything starts: a bad one stops the run with its key.
        try loadParts()
        // A phone switched on in another zone than the one it was switched off in (the state kept, the configuration's
        // or scenario's zone another): the zone changes at start, as iOS's automatic time zone does. Not when a killed
        // broker resumes its scenario, whose steps may have changed the zone.
        if resuming == nil, clock.timeZone.identifier != settings.timeZone.identifier { switchedOnIn = settings.timeZone }
    }


    public func attach(to bus: any ServiceBus) {
        self.bus = bus
        // The parts were loaded before there was a bus to tell: every welcome carries the clock from the first.
        announceClockToPlugins()
        bus.whenReady { [unowned self] in
            JournalCatchUp(device: self).announceWhatTheJournalLacks(zoneToCome: switchedOnIn)
            usage.recordUseLeftInProgress()
            activity.resume()
            lifecycle.resumeTimers()
            if let zone = switchedOnIn {
                switchedOnIn = nil
                setTimeZone(zone.identifier)
            } else if !clock.zoneIsStored {
                saveClock { try clock.setTimeZone(clock.timeZone) }  // the zone it runs in, for the next start to compare
            }
            if settings.clockTicks { ClockTicker(device: self).start() }
            scenario?.start(on: self)
        }
    }

    /// (Re)creates the parts from persistent state: at start and after a simulated device restart.
    private func loadParts() throws {
        clock = try DeviceClock(state: state, defaultTimeZone: settings.timeZone)
        announceClockToPlugins()
        authorization = try AuthorizationService(device: self)
        managedSettings = try ManagedSettingsService(device: self)
        usage = try UsageMeter(device: self)
        activity = try DeviceActivityService(device: self)
        screen = Screen(device: self)
        lifecycle = try AppLifecycle(device: self)
        notifications = try NotificationCenterService(device: self)
        webContent = WebContentFilter(device: self)
    }

    public var isAwaitingReplies: Bool { screen?.isAwaitingReply ?? false }

    public func handle(_ envelope: Envelope) {
        let topic = envelope.topic
        switch topic {
        case DeviceTopic.configurationReply, DeviceTopic.actionReply:
            screen.handleReply(envelope)
        case DeviceTopic.settingsReadRequest, DeviceTopic.settingsWriteRequest:
            managedSettings.handle(envelope)
        case DeviceTopic.startMonitoringRequest, DeviceTopic.stopMonitoringRequest, DeviceTopic.activitiesRequest, DeviceTopic.eventsRequest:
            activity.handle(envelope)
        case DeviceTopic.authorizationRequest, DeviceTopic.pickerRequest:
            authorization.handle(envelope)
        case DeviceTopic.timerRequest, DeviceTopic.openURLRequest, "app.yield.request":
            lifecycle.handle(envelope)
        case DeviceTopic.notificationPostRequest:
            notifications.handle(envelope)
        case _ where envelope.topic.hasPrefix("input.") && envelope.topic.hasSuffix(Topic.requestSuffix):
            handleInput(envelope)
        case Topic.writeFailed:
            inputs.writeFailed(envelope)
        case Topic.callFailed, Topic.multipleWriters:
            countPluginReport(envelope)
        default:
            break
        }
    }

    // MARK: Helpers for the parts

    /// Bus time now, as a date.
    var now: Date { DeviceAPI.date(busTime: bus.now) }

    /// Emits an event; with an `audience` (one product's plugins), only they and taps hear it; with a `fact`, the
    /// event states that fact of the device's durable state (`StatedFact`, `JournalCatchUp`).
    func emit<Body: Encodable>(_ topic: String, _ body: Body, corr: String? = nil, deadline: BusTime? = nil, audience: Set<String>? = nil,
                               fact: String? = nil, factValue: [UInt8]? = nil) {
        bus.emit(topic: topic, bodyJSON: DeviceAPICoding.encode(body), corr: corr, deadline: deadline, audience: audience, fact: fact, factValue: factValue)
    }

    func emit(topic: String, body: JSONValue, audience: Set<String>? = nil, fact: String? = nil) {
        bus.emit(topic: topic, bodyJSON: body.jsonBytes, audience: audience, fact: fact)
    }

    /// The person's action did nothing (a press with no shield up, a tap with no notification): said on the bus as
    /// an error, and to the tool whose input it was (`shieldbus do` then exits non-zero instead of saying "done").
    func actionDidNothing(_ code: String, _ message: String) {
        emit(topic: "bus.error", body: ["code": .string(code), "sender": "broker", "message": .string(message)])
        inputs.refuse(DeviceError(code: code, message: message))
    }

    /// The person's action changed nothing, though a scenario's step may do so silently (closing a tab that is not
    /// open): only the tool whose input it was is told, and it exits non-zero; nothing is said on the bus.
    /// Returns whether a tool's input was so told (false for a scenario's step).
    @discardableResult
    func inputChangedNothing(_ code: String, _ message: String) -> Bool {
        inputs.refuse(DeviceError(code: code, message: message))
    }

    /// Answers a request event with a reply on its reply topic, carrying its correlation id.
    func reply<Value: Codable & Hashable>(to request: Envelope, _ reply: DeviceReply<Value>) {
        emit(Topic.reply(to: request.topic), reply, corr: request.corr)
    }

    /// What iOS lets pass silently, as a plugin reports it: counted in `status` and said on the terminal. Only a
    /// supervised plugin is believed.
    private func countPluginReport(_ envelope: Envelope) {
        guard bus.isSupervisedPlugin(envelope.source) else { return }
        let body = envelope.bodyValue
        if envelope.topic == Topic.callFailed {
            let call = TerminalText.escaped(body["call"]?.stringValue ?? "a call")
            let message = TerminalText.escaped(body["message"]?.stringValue ?? "no reason given")
            bus.countPluginReport("call-failed", "\(envelope.source): \(call) failed: \(message)")
        } else {
            let key = TerminalText.escaped(body["key"]?.stringValue ?? "a key")
            let writers = (body["writers"]?.arrayValue ?? []).compactMap(\.stringValue).map(TerminalText.escaped).joined(separator: " and ")
            bus.countPluginReport("multiple-writers", "\(key) in \(TerminalText.escaped(body["group"]?.stringValue ?? "an app group")) is written by \(writers) (declare it `shared:` if that is meant)")
        }
    }

    /// Saves a piece of persistent state. A failure (disk full, read-only) is reported on the terminal, in
    /// `status` and on the bus — never ignored; the value in memory stays in force and the next change saves it.
    func save<T: Encodable>(_ value: T, key: String) {
        saving(key) { try $0.save(value, key: key) }
    }

    /// Runs a write to the device's state; a failure is handled as `save`'s.
    func saving(_ what: String = "the device state", _ write: (DeviceStateStore) throws -> Void) {
        do {
            try write(state)
        } catch {
            storageFailed("cannot save \(what) in \(state.path): \(error)")
        }
    }

    /// A write to the device's state failed (disk full, read-only): said on the terminal, counted in `status`, and
    /// held against every tool input still waiting (`shieldbus do` is not told "done"). The value is written
    /// with the next save.
    func storageFailed(_ failure: String) {
        bus.reportStorageFailure(failure)
        inputs.noteFailure(failure)
        retryUnsavedSoon()
    }


    func fail(_ request: Envelope, code: String, _ message: String) {
        reply(to: request, DeviceReply<NoValue>.failure(DeviceError(code: code, message: message)))
    }

    /// Decodes a request body, answering with a clear error when it does not decode.
    func decode<T: Decodable>(_ type: T.Type, from request: Envelope) -> T? {
        do {
            return try DeviceAPICoding.decode(type, from: request.body)
        } catch {
            fail(request, code: "bad-request", "the body of \(request.topic) from \(request.source) is not a valid \(type): \(DeviceAPICoding.describe(error))")
            return nil
        }
    }

    /// A fresh correlation id for a request the OS makes.
    func nextCorrelation(_ prefix: String) -> String {
        correlation += 1
        return "os-\(prefix)-\(correlation)"
    }

    /// What the OS tells plugins about an app: token and display name, never the bundle id.
    func application(_ app: CatalogApp) -> Application {
        Application(token: tokens.application(app.bundleIdentifier), localizedDisplayName: app.name)
    }

    func category(id: String?) -> ActivityCategory? {
        guard let id, let category = catalog.category(id: id) else { return nil }
        return ActivityCategory(token: tokens.category(category.id), localizedDisplayName: category.name)
    }

    /// The one product app on the device (nil with none, or several).
    var onlyCompanionApp: String? {
        let apps = settings.products.compactMap(\.companionApp?.name)
        return apps.count == 1 ? apps[0] : nil
    }

    /// The product `plugin` belongs to (on a device with one product, that product).
    func product(of plugin: String) -> DeviceProduct? { settings.products.first { $0.includes(plugin) } }

    /// The product whose companion app `app` is.
    func product(withCompanion app: CatalogApp) -> DeviceProduct? {
        settings.products.first { $0.companionApp?.bundleIdentifier == app.bundleIdentifier }
    }

    /// Who hears what the OS says to `plugin`'s app: its product's plugins on a device with several products (only
    /// itself if it is none's); nil — every subscriber — on a device with one.
    func audience(of plugin: String) -> Set<String>? {
        guard settings.products.count > 1 else { return nil }
        return product(of: plugin)?.plugins ?? [plugin]
    }

    /// Does what the person does: a scenario step or a tool's input.
    func perform(_ action: ScenarioAction) {
        let device = self
        switch action {
        case .open(let app):
            device.activity.pickedUp()
            device.screen.open(app)
        case .close(let app): device.screen.close(app)
        case .home: device.screen.goHome()
        case let .visit(url, host, tab, isPrivate):
            device.activity.pickedUp()
            device.screen.visit(url: url, host: host, tab: tab, isPrivate: isPrivate)
        case .closeTab(let tab): device.screen.closeTab(tab)
        case .press(let button): device.screen.press(button == .primary ? .primaryButtonPressed : .secondaryButtonPressed)
        case .tapNotification(let id): device.notifications.tap(id: id)
        case .habit(let name):
            switch HabitChoice(name, products: settings.products) {
            case .offered(let habit): device.emit(DeviceTopic.habitCompleted, HabitCompleted(habit: habit))
            case .unknown(let why):
                // A scenario's step is its day as written: only a tool's input is refused.
                if !device.inputChangedNothing("unknown-habit", why) { device.emit(DeviceTopic.habitCompleted, HabitCompleted(habit: name)) }
            }
        case let .appAction(app, action):
            guard let name = app?.name ?? device.onlyCompanionApp else {
                let why = settings.products.contains { $0.companionApp != nil } ? "the device has several product apps: give {app: …, action: \(action)}"
                                                                                : "the device has no product app (device.companionApp)"
                device.emit(topic: "bus.error", body: ["code": "ambiguous-app-action", "message": .string("the app action '\(action)' names no app and \(why)")])
                return
            }
            // Only that app's product hears it, on a device with several; the journal keeps it for the checker.
            let owner = settings.products.count > 1 ? settings.products.first { $0.companionApp?.name == name }?.plugins : nil
            device.emit(DeviceTopic.appAction, AppAction(app: name, action: action), audience: owner)
        case .authorize(let answer):
            switch answer {
            case .approved: device.authorization.answer(.approved)
            case .denied: device.authorization.answer(.denied)
            case .revoked: device.authorization.revoke()
            }
        case .osUpdate: device.updateOperatingSystem()
        case .restart: device.restart()
        case .switchTab(let tab): device.screen.switchTab(tab)
        case .setClock(let setting): device.setClock(setting)
        case .setTimeZone(let identifier): device.setTimeZone(identifier)
        case .crashBroker: device.crashBroker()
        case .fillActivityLimit: device.activity.fillLimit()
        case .forceQuit(let app):
            if let product = device.product(withCompanion: app) {
                // Its process ends whether or not it is on screen: something happens either way.
                if device.screen.foreground == .app(bundleIdentifier: app.bundleIdentifier) { device.screen.close(app) }
                device.lifecycle.appTerminated(product)
                if let plugin = product.companionPluginName { device.bus.restartPlugin(named: plugin, reason: "force-quit by the person") }
            } else if device.screen.foreground == .app(bundleIdentifier: app.bundleIdentifier) {
                device.screen.close(app)
            } else {
                // An app the OS does not run in the background here: only one on screen has anything to quit.
                device.inputChangedNothing("not-on-screen", "force-quit \(app.name): \(app.name) is not on screen; nothing was quit")
            }
        case let .publish(topic, bodyJSON):
            device.bus.emit(topic: topic, bodyJSON: Array(bodyJSON.utf8), source: "scenario")
        }
    }

    /// `input.<action>.request` from a tool: the person's action, answered with ok or an error.
    private func handleInput(_ envelope: Envelope) {
        let body = envelope.bodyValue
        let name = envelope.topic.dropFirst("input.".count).dropLast(Topic.requestSuffix.count)
        do {
            switch name {
            case "look":
                // Read-only: the phone as it is now, for a tool that came late; no step, nothing performed.
                var look = DeviceLook(notifications: notifications.delivered, activities: activity.schedules)
                screen.look(into: &look)
                reply(to: envelope, .success(look))
            case "pick":
                reply(to: envelope, .success(PickerResult(selection: try pick(body))))
            default:
                guard let verb = PersonVerb(rawValue: String(name)) else {
                    throw DeviceError(code: "unknown-input", message: "unknown input '\(name)'; inputs: \((PersonVerb.names + ["pick", "look"]).joined(separator: ", "))")
                }
                try perform(try personAction(verb, body), asked: envelope)
            }
        } catch let error as DeviceError {
            reply(to: envelope, DeviceReply<NoValue>.failure(error))
        } catch {
            fail(envelope, code: "bad-request", "\(error)")
        }
    }

    /// The person's action a request asks for, its names resolved on this device.
    private func personAction(_ verb: PersonVerb, _ body: JSONValue) throws -> ScenarioAction {
        let asked: PersonAction
        do {
            asked = try PersonAction(verb: verb, requestBody: body)
        } catch {
            throw DeviceError(code: "bad-request", message: error.description)
        }
        if case .appAction(nil, _) = asked, onlyCompanionApp == nil {
            throw DeviceError(code: "bad-request", message: settings.products.contains { $0.companionApp != nil }
                ? "'app-action' needs 'app': the device has several product apps" : "'app-action': the device has no product app (device.companionApp)")
        }
        do {
            return try ScenarioAction(asked, catalog: catalog)
        } catch let unknown as CatalogLookupError {
            throw DeviceError(code: "unknown-app", message: "\(unknown)")
        } catch let problem as ClockSetting.Problem {
            throw DeviceError(code: "bad-request", message: "'set-clock' needs 'to': \(problem.description)")
        } catch let unknown as Scenario.UnknownTimeZone {
            throw DeviceError(code: "bad-request", message: "'time-zone' needs 'zone': \(unknown.description)")
        }
    }

    /// Performs the person's `action` for the tool that asked, and answers it once the plugins have handled it.
    private func perform(_ action: ScenarioAction, asked envelope: Envelope) throws {
        if action == .crashBroker {
            // Answered first: the crash loses every pending request, this one's too.
            emit(topic: DeviceTopic.scenarioStep, body: ["action": .string(ScenarioPlayer.describe(.crashBroker)), "by": .string(envelope.source)])
            reply(to: envelope, .success(InputOutcome(handled: false, screen: nil)))
            bus.whenQuiet { [unowned self] in perform(.crashBroker) }
            return
        }
        emit(topic: DeviceTopic.scenarioStep, body: ["action": .string(ScenarioPlayer.describe(action)), "by": .string(envelope.source)])
        inputs.perform(envelope) { perform(action) }
    }

    /// The person's pick in the FamilyActivityPicker (`input.pick.request {apps, categories, domains}`).
    private func pick(_ body: JSONValue) throws -> FamilyActivitySelection {
        let names = { (key: String) in body[key]?.arrayValue?.compactMap(\.stringValue) ?? [] }
        var selection = FamilyActivitySelection()
        do {
            for name in names("apps") { selection.applicationTokens.insert(tokens.application(try catalog.requireApp(named: name).bundleIdentifier)) }
        } catch let unknown as CatalogLookupError {
            throw DeviceError(code: "unknown-app", message: "\(unknown)")
        }
        for id in names("categories") {
            guard catalog.category(id: id) != nil else { throw DeviceError(code: "unknown-category", message: "no category '\(id)'; categories: \(catalog.categories.map(\.id).joined(separator: ", "))") }
            selection.categoryTokens.insert(tokens.category(id))
        }
        for domain in names("domains") { selection.webDomainTokens.insert(tokens.webDomain(catalog.domain(domain)?.domain ?? domain)) }
        return selection
    }

    // MARK: Whole-device events

    /// An iOS update or restore: every token is regenerated; the OS carries its own settings over (not under
    /// `tokens-change-under-shields`).
    func updateOperatingSystem() {
        // The use so far is recorded in the old tokens and goes on in the new ones: an app still in front after the
        // update is still in use (a paused meter would never count it again, and no threshold would come that day).
        usage.flush()
        let migration = tokens.regenerate(for: catalog)
        save(tokens.epoch, key: "tokens.epoch")
        if settings.fidelity.has(.tokensChangeUnderShields) {
            // iOS 17.5.1: the stores and the monitored events keep the old tokens, which match no app any more —
            // shields go blank and thresholds count nothing, without a word from iOS; said here as a quirk.
            emit(topic: "device.quirk", body: ["quirk": .string(Quirk.tokensChangeUnderShields.rawValue), "tokenEpoch": .int(Int64(tokens.epoch)),
                                               "stores": .array(managedSettings.stores.keys.sorted().map(JSONValue.string))])
        } else {
            managedSettings.migrate(migration)
            activity.migrate(migration)
        }
        announceTokenEpoch()
        screen.reevaluate(reason: "os-update")
    }

    /// `device.os-updated {tokenEpoch}`: the tokens in force.
    func announceTokenEpoch() {
        emit(topic: DeviceTopic.osUpdated, body: ["tokenEpoch": .int(Int64(tokens.epoch))], fact: StatedFact.tokenEpoch)
    }

    /// A device restart: every process ends, in-memory state is lost, persistent state is reloaded.
    func restart() {
        lifecycle.appTerminated(nil)  // the apps' timers end with their processes
        reload()
        emit(topic: DeviceTopic.restarted, body: [:])
        bus.restartAllPlugins(reason: "device restart")
        bus.whenQuiet { [unowned self] in activity.resume() }
    }

    /// The broker is killed as by SIGKILL and starts again on the same state folder: what it held in memory
    /// (timers, what is on screen, the app's timers, mailboxes) is lost, every plugin is started again, and the
    /// journal shows `bus.started` again. Steps play when the bus is quiet, so nothing else is in flight.
    func crashBroker() {
        reload()
        bus.crashAndRestart()
        bus.whenQuiet { [unowned self] in activity.resume() }
    }

    /// Drops what the OS held in memory and reloads its parts from persistent state.
    private func reload() {
        usage.pause()
        activity.suspendTimers()
        screen.reset()
        do {
            try loadParts()
        } catch {
            emit(topic: "bus.error", body: ["code": "device-state", "message": .string("reloading the device state failed: \(error)"), "sender": "broker"])
        }
    }
}
