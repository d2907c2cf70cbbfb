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
public final class DeviceOS: BrokerService, DeviceHost {
    let settings: DeviceSettings
    let catalog: AppCatalog
    let logger: Logger
    private let random: DeviceRandom
    /// The bus, once the broker attaches the device to it.
    private(set) var attachedBus: (any ServiceBus)?
    var bus: any ServiceBus { attachedBus! }
    let state: DeviceStateStore
    let tokens: TokenIssuer
    let directory: DeviceDirectory

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
    private lazy var inputs = InputConfirmations(host: self) { [unowned self] in
        var look = DeviceLook()
        screen.look(into: &look)
        return look
    }

    public let subscriptions = [
        "shield.configuration.reply", "shield.action.reply", "managedsettings.", "deviceactivity.", "familycontrols.",
        "app.", "notification.post.request", "input.", DeviceTopic.writeFailed, DeviceTopic.callFailed, DeviceTopic.multipleWriters,
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
        random = DeviceRandom(seed: settings.fidelity.seed)
        state = try DeviceStateStore(path: statePath)
        tokens = TokenIssuer(seed: settings.fidelity.seed, epoch: try state.load(Int.self, key: "tokens.epoch") ?? 0)
        tokens.issueAll(for: catalog)
        directory = DeviceDirectory(settings: settings, catalog: catalog, tokens: tokens)
        if let scenario { self.scenario = ScenarioPlayer(scenario: scenario, resumeAt: resuming, crashAtStep: crashAtStep) }
        // Every stored value is read now, before anything starts: a bad one stops the run with its key.
        try loadParts()
        // A phone switched on in another zone than the one it was switched off in (the state kept, the configuration's
        // or scenario's zone another): the zone changes at start, as iOS's automatic time zone does. Not when a killed
        // broker resumes its scenario, whose steps may have changed the zone.
        if resuming == nil, clock.timeZone.identifier != settings.timeZone.identifier { switchedOnIn = settings.timeZone }
    }


    /// What `device.sqlite` lost to the machine's restart (a power cut), found as it opened: nil when nothing. Its
    /// owner says it (`shieldbus run`: the broker, as `bus.error` `writes-lost`, `BrokerSettings.storeLosses`).
    public var restartLoss: String? { state.restartLoss }

    /// The store's log started beside the plugins' starts, not in the first turn after `bus.ready`.
    public func whilePluginsStart() { state.startEmptyLog() }

    /// The store's close work done while the plugins end, not after them.
    public func whilePluginsStop() { state.copyLogBeforeClose() }

    public func attach(to bus: any ServiceBus) {
        attachedBus = bus
        // The parts were loaded before there was a bus to tell: every welcome carries the clock from the first.
        announceClockToPlugins()
        bus.whenReady { [unowned self] in
            // Not a failed save: the write stands, so no tool's input is failed for it. Said once the run is under
            // way (a failure standing since the start at once), never before `bus.started`.
            state.onNoteFailure = { [unowned self] in self.bus.reportStorageFailure("cannot note a commit of \($0)") }
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
            if settings.clockTicks { ClockTicker(host: self, zoneInForce: { [unowned self] in clock.timeZone }).start() }
            scenario?.start(on: self)
        }
    }

    /// (Re)creates the parts from persistent state: at start and after a simulated device restart. Each is handed
    /// the parts built before it that it asks of, and tells what happened through events wired here to the parts
    /// that follow it: the parts know of no other part.
    private func loadParts() throws {
        clock = try DeviceClock(state: state, defaultTimeZone: settings.timeZone)
        announceClockToPlugins()
        authorization = try AuthorizationService(host: self, directory: directory) { [unowned self] in
            managedSettings.clearAll(reason: "authorization revoked")
            activity.stopAll(reason: "authorization revoked")
        }
        managedSettings = try ManagedSettingsService(host: self, directory: directory, authorization: authorization) { [unowned self] in
            screen.reevaluate(reason: "managed-settings")
        }
        usage = try UsageMeter(host: self, directory: directory, events: .init(
            useChanged: { [unowned self] in activity.usageChanged() },
            recorded: { [unowned self] in activity.record($0) }))
        activity = try DeviceActivityService(host: self, directory: directory, clock: clock, random: random, usage: usage, authorization: authorization)
        webContent = WebContentFilter(host: self, settings: settings, clock: clock, usage: usage) { [unowned self] in screen.recheckWebPage() }
        screen = Screen(host: self, directory: directory, stores: managedSettings, webContent: webContent, events: .init(
            appInUse: { [unowned self] app, reason in
                usage.begin(app: app)
                if let product = directory.product(withCompanion: app) { lifecycle.enterForeground(product, reason: reason) }
            },
            pageInUse: { [unowned self] domain, categoryID, isPrivate in
                usage.begin(webDomain: domain, categoryID: categoryID, isPrivate: isPrivate)
                webContent.watchCurrentUse()
            },
            useEnded: { [unowned self] in usage.end() },
            appLeft: { [unowned self] app in
                if let product = directory.product(withCompanion: app) { lifecycle.enterBackground(product) }
            }))
        lifecycle = try AppLifecycle(host: self, directory: directory)
        notifications = try NotificationCenterService(host: self, directory: directory) { [unowned self] app in
            screen.open(app, reason: "notification")
        }
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
        case DeviceTopic.writeFailed:
            inputs.writeFailed(envelope)
        case DeviceTopic.callFailed, DeviceTopic.multipleWriters:
            countPluginReport(envelope)
        default:
            break
        }
    }

    // MARK: The device as the parts' host

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

    /// What iOS lets pass silently, as a plugin reports it: counted in `status` and said on the terminal. Only a
    /// supervised plugin is believed.
    private func countPluginReport(_ envelope: Envelope) {
        guard bus.isSupervisedPlugin(envelope.source) else { return }
        let body = envelope.bodyValue
        if envelope.topic == DeviceTopic.callFailed {
            let call = TerminalText.escaped(body["call"]?.stringValue ?? "a call")
            let message = TerminalText.escaped(body["message"]?.stringValue ?? "no reason given")
            bus.countPluginReport("call-failed", "\(envelope.source): \(call) failed: \(message)")
        } else {
            let key = TerminalText.escaped(body["key"]?.stringValue ?? "a key")
            let writers = (body["writers"]?.arrayValue ?? []).compactMap(\.stringValue).map(TerminalText.escaped).joined(separator: " and ")
            bus.countPluginReport("multiple-writers", "\(key) in \(TerminalText.escaped(body["group"]?.stringValue ?? "an app group")) is written by \(writers) (declare it `shared:` if that is meant)")
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

    /// A fresh correlation id for a request the OS makes.
    func nextCorrelation(_ prefix: String) -> String {
        correlation += 1
        return "os-\(prefix)-\(correlation)"
    }

    /// Does what the person does: a scenario step or a tool's input.
    func perform(_ action: ScenarioAction) {
        switch action {
        case .open(let app):
            activity.pickedUp()
            screen.open(app)
        case .close(let app): screen.close(app)
        case .home:
            // On the home screen already it changes nothing: a tool is told so (a scenario's step goes on silently).
            guard screen.foreground != .home else {
                inputChangedNothing("nothing-open", "home: the home screen is showing already; nothing changed")
                return
            }
            screen.goHome()
        case let .visit(url, host, tab, isPrivate):
            activity.pickedUp()
            screen.visit(url: url, host: host, tab: tab, isPrivate: isPrivate)
        case .closeTab(let tab): screen.closeTab(tab)
        case .press(let button): screen.press(button == .primary ? .primaryButtonPressed : .secondaryButtonPressed)
        case .tapNotification(let id): notifications.tap(id: id)
        case .habit(let name):
            switch OfferedHabits(products: settings.products).choice(name) {
            case .offered(let habit): emit(DeviceTopic.habitCompleted, HabitCompleted(habit: habit))
            case .unknown(let why):
                // A scenario's habits were checked when it was read (`Scenario.parse`): only a tool's input is left to refuse.
                if !inputChangedNothing("unknown-habit", why) { emit(DeviceTopic.habitCompleted, HabitCompleted(habit: name)) }
            }
        case let .appAction(app, action):
            guard let name = app?.name ?? directory.onlyCompanionApp else {
                let why = settings.products.contains { $0.companionApp != nil } ? "the device has several product apps: give {app: …, action: \(action)}"
                                                                                : "the device has no product app (device.companionApp)"
                emit(topic: "bus.error", body: ["code": "ambiguous-app-action", "message": .string("the app action '\(action)' names no app and \(why)")])
                return
            }
            // Only that app's product hears it, on a device with several; the journal keeps it for the checker.
            let owner = settings.products.count > 1 ? settings.products.first { $0.companionApp?.name == name }?.plugins : nil
            emit(DeviceTopic.appAction, AppAction(app: name, action: action), audience: owner)
        case .authorize(let answer):
            switch answer {
            case .approved: authorization.answer(.approved)
            case .denied: authorization.answer(.denied)
            case .revoked: authorization.revoke()
            }
        case .osUpdate: updateOperatingSystem()
        case .restart: restart()
        case .switchTab(let tab): screen.switchTab(tab)
        case .setClock(let setting): setClock(setting)
        case .setTimeZone(let identifier): setTimeZone(identifier)
        case .crashBroker: crashBroker()
        case .fillActivityLimit: activity.fillLimit()
        case .forceQuit(let app):
            if let product = directory.product(withCompanion: app) {
                // Its process ends whether or not it is on screen: something happens either way.
                if screen.foreground == .app(bundleIdentifier: app.bundleIdentifier) { screen.close(app) }
                lifecycle.appTerminated(product)
                if let plugin = product.companionPluginName { bus.restartPlugin(named: plugin, reason: "force-quit by the person") }
            } else if screen.foreground == .app(bundleIdentifier: app.bundleIdentifier) {
                screen.close(app)
            } else {
                // An app the OS does not run in the background here: only one on screen has anything to quit.
                inputChangedNothing("not-on-screen", "force-quit \(app.name): \(app.name) is not on screen; nothing was quit")
            }
        case let .publish(topic, bodyJSON):
            bus.emit(topic: topic, bodyJSON: Array(bodyJSON.utf8), source: DeviceTopic.scenarioSource)
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
        if case .appAction(nil, _) = asked, directory.onlyCompanionApp == nil {
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
