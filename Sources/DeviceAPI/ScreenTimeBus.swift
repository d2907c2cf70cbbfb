// Screen Time on the bus: its namespaces, its components' roles, the events only the OS produces, the person's input,
// the plugins' reports to the OS, and which component answers which request — the table the broker is handed (`BusTable.screenTime`) and the SDK and the
// tools read.

import BusProtocol

extension Role {
    /// The DeviceActivity monitor extension.
    public static let monitor: Role = "monitor"
    /// The shield configuration extension: answers `shield.configuration.request`.
    public static let shield: Role = "shield"
    /// The shield action extension: answers `shield.action.request`.
    public static let action: Role = "action"
    /// A notification service.
    public static let notifier: Role = "notifier"
    /// The device activity report extension: answers `report.*` requests.
    public static let report: Role = "report"
    /// The companion app.
    public static let app: Role = "app"

    /// Whether iOS runs this role's extension without network: the shield configuration and the report extension.
    public var runsWithoutNetwork: Bool { self == .shield || self == .report }
}

extension DeviceTopic {
    /// The namespace of the person's actions, injected by tools (`shieldbus do`); only tools (and plugins configured
    /// with `personInput: true`) may publish it.
    public static let inputNamespace = "input"

    /// A plugin could not record what an event asked for (a full or read-only App-Group store); the device reports
    /// it (protocol.md § 10).
    public static let writeFailed = "state.write-failed"

    /// A call that iOS fails silently (a shield setter refused, an App Group that is not the plugin's, a completion
    /// handler never called) failed in a plugin: `{call, message}`; the device counts it (protocol.md § 10).
    public static let callFailed = "state.call-failed"

    /// An App-Group key that a second plugin wrote (allowed, as on iOS, and reported unless declared `shared:`):
    /// `{group, key, writers}` (protocol.md § 10).
    public static let multipleWriters = "state.multiple-writers"

    /// The namespaces of the system's own bookkeeping — the bus's and the device's — which not even a scenario may
    /// publish into.
    public static let systemNamespaces: Set<String> = ["bus", "clock", "device", "plugin", "scenario"]
}

extension BusTable {
    /// Screen Time's table: its namespaces, its six roles (each held by one client at most), the OS's events, the
    /// shield and report requests the OS hands to their extensions, and the person's input (`input.`).
    public static let screenTime = BusTable(
        namespaces: [
            "activity", "app", "bus", "clock", "device", "deviceactivity", "familycontrols", DeviceTopic.inputNamespace, "managedsettings",
            "notification", "plugin", "report", "scenario", "shield", "state", "web", Topic.pluginNamespace,
        ],
        roles: [.monitor, .shield, .action, .notifier, .report, .app],
        exclusiveRoles: [.monitor, .shield, .action, .notifier, .report, .app],
        systemOnlyPrefixes: [
            "activity.", "bus.", "clock.", "device.", "plugin.", "scenario.",
            "deviceactivity.interval-", "deviceactivity.event-", "deviceactivity.callback-",
            DeviceTopic.configurationRequest, DeviceTopic.actionRequest, DeviceTopic.shieldShown, DeviceTopic.shieldDismissed,
            DeviceTopic.actionHandled, DeviceTopic.settingsChanged, DeviceTopic.authorizationChanged,
            "app.lifecycle.", DeviceTopic.timerFired, DeviceTopic.urlOpened, DeviceTopic.notificationPosted, DeviceTopic.notificationTapped,
        ],
        requestRoutes: [
            .init(prefix: "shield.configuration.", role: .shield),
            .init(prefix: "shield.action.", role: .action),
            .init(prefix: "report.", role: .report),
        ],
        personInputPrefixes: [DeviceTopic.inputNamespace + "."],
        sourceNames: [DeviceTopic.systemSource, DeviceTopic.scenarioSource])
}

extension DeviceTopic {
    /// The OS's name where it acts in its own right (who wrote a store, who drew or answered a shield).
    public static let systemSource = "system"
    /// The source of the events a scenario publishes as they are.
    public static let scenarioSource = "scenario"
}

extension Envelope {
    /// Whether the event comes from Screen Time's system: the broker, the OS, or a scenario.
    public var isFromSystem: Bool { isFromSystem(of: .screenTime) }
}
