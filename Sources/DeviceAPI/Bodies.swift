import Foundation
import ScreenTime

/// A reply that may carry an error: `{"ok":true,...}` or `{"ok":false,"error":{"code":…,"message":…}}`.
public struct DeviceError: Error, Codable, Hashable, CustomStringConvertible {
    /// A stable code, e.g. `unauthorized`, `interval-too-short`, `only-owner-may-remove`.
    public var code: String
    public var message: String
    /// With `plugins-could-not-act`: each plugin that could not act, and why (absent otherwise).
    public var plugins: [PluginOutOfAction]?
    public init(code: String, message: String, plugins: [PluginOutOfAction]? = nil) {
        self.code = code
        self.message = message
        self.plugins = plugins
    }
    public var description: String { "\(message) [\(code)]" }
}

/// A supervised plugin that acts on nothing until it is started again (given up on, or stopped), and why.
public struct PluginOutOfAction: Codable, Hashable {
    public var name: String
    public var why: String
    public init(name: String, why: String) {
        self.name = name
        self.why = why
    }
}

/// What a shield covers: an app or a web domain, with what the OS shares about it.
public struct ShieldTarget: Codable, Hashable {
    public var application: Application?
    public var webDomain: WebDomain?
    public var category: ActivityCategory?
    public init(application: Application? = nil, webDomain: WebDomain? = nil, category: ActivityCategory? = nil) {
        self.application = application
        self.webDomain = webDomain
        self.category = category
    }
    /// A name for people: the app's display name or the domain.
    public var displayName: String { application?.localizedDisplayName ?? webDomain?.domain ?? "?" }
}

/// `shield.configuration.request`: the OS asks the shield renderer how to draw a shield.
public struct ShieldConfigurationRequest: Codable, Hashable {
    public var entryPoint: ShieldEntryPoint
    public var target: ShieldTarget
    public init(entryPoint: ShieldEntryPoint, target: ShieldTarget) {
        self.entryPoint = entryPoint
        self.target = target
    }
}

/// `shield.configuration.reply`.
public struct ShieldConfigurationReply: Codable, Hashable {
    public var configuration: ShieldConfiguration
    public init(configuration: ShieldConfiguration) { self.configuration = configuration }
}

/// `shield.action.request`: a shield button was pressed; the OS asks the action delegate what to do.
/// As on iOS, the delegate gets the token the system hands it at that moment — never a bundle id.
public struct ShieldActionRequest: Codable, Hashable {
    public var action: ShieldAction
    public var entryPoint: ShieldEntryPoint
    public var application: ApplicationToken?
    public var webDomain: WebDomainToken?
    public var category: ActivityCategoryToken?
    public init(action: ShieldAction, entryPoint: ShieldEntryPoint, application: ApplicationToken? = nil,
                webDomain: WebDomainToken? = nil, category: ActivityCategoryToken? = nil) {
        self.action = action
        self.entryPoint = entryPoint
        self.application = application
        self.webDomain = webDomain
        self.category = category
    }
}

/// `shield.action.reply`.
public struct ShieldActionReply: Codable, Hashable {
    public var response: ShieldActionResponse
    public init(response: ShieldActionResponse) { self.response = response }
}

extension ShieldActionRequest {
    /// The keyed container its decoding makes (an action delegate's launch reads one request), for a launch template's
    /// warm-up to name (ScreenTime's `ShieldSettings.encodingContainerTypes` says why).
    package static var decodingContainerTypes: [Any.Type] { [KeyedDecodingContainer<CodingKeys>.self] }
}

extension ShieldActionReply {
    /// The keyed container its encoding makes (an action delegate's launch answers once), for a launch template's
    /// warm-up to name (ScreenTime's `ShieldSettings.encodingContainerTypes` says why).
    package static var encodingContainerTypes: [Any.Type] { [KeyedEncodingContainer<CodingKeys>.self] }
}

/// `shield.shown`: the OS presented a shield.
public struct ShieldShown: Codable, Hashable {
    public var target: ShieldTarget
    public var entryPoint: ShieldEntryPoint
    public var stores: [String]
    public var configuration: ShieldConfiguration
    /// The plugin that drew it, or `system` for the default shield.
    public var renderedBy: String
    /// Why the default shield was used: `no-renderer`, `renderer-timeout`, `renderer-error`.
    public var fallbackReason: String?
    /// Over a web page: the browser tab it covers, and whether that tab is private (absent over an app). A page
    /// shielded on its first visit was never `activity.web.visited`, so this is how a watcher knows its tab.
    public var tab: Int?
    public var isPrivate: Bool?
    public init(target: ShieldTarget, entryPoint: ShieldEntryPoint, stores: [String], configuration: ShieldConfiguration,
                renderedBy: String, fallbackReason: String? = nil, tab: Int? = nil, isPrivate: Bool? = nil) {
        self.target = target
        self.entryPoint = entryPoint
        self.stores = stores
        self.configuration = configuration
        self.renderedBy = renderedBy
        self.fallbackReason = fallbackReason
        self.tab = tab
        self.isPrivate = isPrivate
    }
}

/// `activity.app.opened` / `activity.app.closed`: an app came to the screen or left it.
public struct AppActivity: Codable, Hashable {
    public var application: Application
    public var category: ActivityCategory?
    /// Why: `user`, `shield-lifted`, `defer`, `notification`, `shield`, `home`, `switch`, `close`.
    public var reason: String
    public init(application: Application, category: ActivityCategory?, reason: String) {
        self.application = application
        self.category = category
        self.reason = reason
    }
}

/// `activity.web.visited` / `activity.web.left`: a page in a browser tab.
public struct WebActivity: Codable, Hashable {
    public var webDomain: WebDomain
    public var category: ActivityCategory?
    public var url: String
    public var tab: Int
    public var isPrivate: Bool
    public var reason: String
    public init(webDomain: WebDomain, category: ActivityCategory?, url: String, tab: Int, isPrivate: Bool, reason: String) {
        self.webDomain = webDomain
        self.category = category
        self.url = url
        self.tab = tab
        self.isPrivate = isPrivate
        self.reason = reason
    }
}

/// `managedsettings.read.reply`: every store's shield settings.
public struct ManagedSettingsSnapshot: Codable, Hashable {
    public var stores: [String: ShieldSettings]
    public init(stores: [String: ShieldSettings]) { self.stores = stores }
}

/// `managedsettings.write.request`: the complete new shield settings of one store.
public struct ManagedSettingsWrite: Codable, Hashable {
    public var store: String
    public var shield: ShieldSettings
    public init(store: String, shield: ShieldSettings) {
        self.store = store
        self.shield = shield
    }
}

extension ManagedSettingsWrite {
    /// The keyed container its encoding makes, for a launch template's warm-up to name (ShieldSettings'
    /// `encodingContainerTypes` says why).
    package static var encodingContainerTypes: [Any.Type] { [KeyedEncodingContainer<CodingKeys>.self] }
}

/// `managedsettings.changed`: a store's settings after a write, and who wrote them.
public struct ManagedSettingsChanged: Codable, Hashable {
    public var store: String
    public var shield: ShieldSettings
    public var writer: String
    public init(store: String, shield: ShieldSettings, writer: String) {
        self.store = store
        self.shield = shield
        self.writer = writer
    }
}

/// `deviceactivity.start-monitoring.request`.
public struct StartMonitoring: Codable, Hashable {
    public var activity: DeviceActivityName
    public var schedule: DeviceActivitySchedule
    public var events: [DeviceActivityEvent.Name: DeviceActivityEvent]
    public init(activity: DeviceActivityName, schedule: DeviceActivitySchedule, events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:]) {
        self.activity = activity
        self.schedule = schedule
        self.events = events
    }
}

/// `deviceactivity.stop-monitoring.request`: the activities to stop (empty: all).
public struct StopMonitoring: Codable, Hashable {
    public var activities: [DeviceActivityName]
    public init(activities: [DeviceActivityName]) { self.activities = activities }
}

/// `deviceactivity.activities.reply`.
public struct MonitoredActivities: Codable, Hashable {
    public var activities: [DeviceActivityName]
    public init(activities: [DeviceActivityName]) { self.activities = activities }
}

/// `deviceactivity.events.request` (an activity) and its reply (the activity's events, in the current tokens).
public struct MonitoredEvents: Codable, Hashable {
    public var activity: DeviceActivityName
    public var events: [DeviceActivityEvent.Name: DeviceActivityEvent]
    public init(activity: DeviceActivityName, events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:]) {
        self.activity = activity
        self.events = events
    }
}

/// A monitored activity as the OS holds it: its schedule and since when it is monitored.
public struct MonitoredSchedule: Codable, Hashable {
    public var activity: DeviceActivityName
    public var schedule: DeviceActivitySchedule
    public var registeredAt: Date
    public init(activity: DeviceActivityName, schedule: DeviceActivitySchedule, registeredAt: Date) {
        self.activity = activity
        self.schedule = schedule
        self.registeredAt = registeredAt
    }
}

/// `input.look.reply`: the phone as the person would see it now — the app or page in the foreground (nil both: the
/// home screen), the shield over it, the notifications not yet tapped (oldest first) — and the monitored schedules.
/// A tool that connects late (the Studio) learns here what the events before it said; looking changes nothing.
public struct DeviceLook: Codable, Hashable {
    public var app: AppActivity?
    public var web: WebActivity?
    public var shield: ShieldShown?
    public var notifications: [NotificationRequest]
    public var activities: [MonitoredSchedule]
    public init(app: AppActivity? = nil, web: WebActivity? = nil, shield: ShieldShown? = nil, notifications: [NotificationRequest] = [],
                activities: [MonitoredSchedule] = []) {
        self.app = app
        self.web = web
        self.shield = shield
        self.notifications = notifications
        self.activities = activities
    }
}

/// The body of every DeviceActivity callback event.
public struct DeviceActivityCallback: Codable, Hashable {
    public var activity: DeviceActivityName
    public var event: DeviceActivityEvent.Name?
    /// When the OS meant to call (it may call late under the ios-realistic profile).
    public var scheduledFor: Date
    public init(activity: DeviceActivityName, event: DeviceActivityEvent.Name? = nil, scheduledFor: Date) {
        self.activity = activity
        self.event = event
        self.scheduledFor = scheduledFor
    }
}

/// `familycontrols.authorization.request`.
public struct AuthorizationRequest: Codable, Hashable {
    public var member: FamilyControlsMember
    public init(member: FamilyControlsMember) { self.member = member }
}

/// `familycontrols.authorization.reply` and `.changed`.
public struct AuthorizationState: Codable, Hashable {
    public var status: AuthorizationStatus
    public init(status: AuthorizationStatus) { self.status = status }
}

/// `familycontrols.picker.reply`: what the person picked in the FamilyActivityPicker.
public struct PickerResult: Codable, Hashable {
    public var selection: FamilyActivitySelection
    public init(selection: FamilyActivitySelection) { self.selection = selection }
}

/// `notification.post.request`.
public struct NotificationRequest: Codable, Hashable {
    public enum InterruptionLevel: String, Codable, Hashable, CaseIterable { case passive, active, timeSensitive = "time-sensitive" }
    public var id: String
    public var title: String
    public var body: String
    public var interruptionLevel: InterruptionLevel
    /// What kind of notification, for de-duplication.
    public var kind: String?
    public init(id: String, title: String, body: String, interruptionLevel: InterruptionLevel = .active, kind: String? = nil) {
        self.id = id
        self.title = title
        self.body = body
        self.interruptionLevel = interruptionLevel
        self.kind = kind
    }
}

/// `app.timer.request`: fire `app.timer.fired` at a bus time (suspended while the app is, under ios-realistic).
public struct AppTimerRequest: Codable, Hashable {
    public var id: String
    public var fireAt: Date
    public init(id: String, fireAt: Date) {
        self.id = id
        self.fireAt = fireAt
    }
}

/// `app.timer.fired`.
public struct AppTimerFired: Codable, Hashable {
    public var id: String
    public var scheduledFor: Date
    public init(id: String, scheduledFor: Date) {
        self.id = id
        self.scheduledFor = scheduledFor
    }
}

/// `app.open-url.request` and `app.url.opened`.
public struct OpenURL: Codable, Hashable {
    public var url: String
    public init(url: String) { self.url = url }
}

/// `activity.habit.completed`.
public struct HabitCompleted: Codable, Hashable {
    public var habit: String
    public init(habit: String) { self.habit = habit }
}

/// The person did something in a product's app (`activity.app.action`): a button the app offers, such as "skip
/// tonight" or "pause for 15 minutes". The OS says it, as it says a habit done: the app's plugin reacts, and the
/// lock-invariant checker reads it as the person's act.
public struct AppAction: Codable, Hashable {
    /// The app's name in the catalog.
    public var app: String
    public var action: String
    public init(app: String, action: String) {
        self.app = app
        self.action = action
    }
}

/// The reply to a tool's input (`input.<action>.reply`): whether the plugins had handled what it caused when the
/// device answered (false: still busy after a few seconds; a failure to record it is an error reply instead).
public struct InputOutcome: Codable, Hashable {
    public var handled: Bool
    /// What is on screen once the input was handled: the app or page in front, and the shield over it, if any.
    public var screen: DeviceLook?
    public init(handled: Bool, screen: DeviceLook? = nil) {
        self.handled = handled
        self.screen = screen
    }
}

/// An empty reply value.
public struct NoValue: Codable, Hashable {
    public init() {}
}

/// The reply to a device API request: `{"ok":true,"value":…}` or `{"ok":false,"error":{"code":…,"message":…}}`.
public struct DeviceReply<Value: Codable & Hashable>: Codable, Hashable {
    public var ok: Bool
    public var value: Value?
    public var error: DeviceError?

    public static func success(_ value: Value) -> DeviceReply { DeviceReply(ok: true, value: value, error: nil) }
    public static func failure(_ error: DeviceError) -> DeviceReply { DeviceReply(ok: false, value: nil, error: error) }

    /// The value, or the error thrown.
    public func get() throws -> Value {
        if ok, let value { return value }
        throw error ?? DeviceError(code: "malformed-reply", message: "the reply has neither a value nor an error")
    }
}
