/// How urgently a plugin's work runs beside the rest of the device's, in Apple's words (`DispatchQoS.QoSClass`): on
/// iOS a shield's configuration is asked for at user-interactive QoS while monitor, report and notification work runs
/// at utility or background QoS. The broker gives each supervised plugin process its class's scheduling when it starts
/// it (`PluginScheduling` in Sources/Broker), under a real or scaled clock.
public enum QoSClass: String, CaseIterable, Sendable {
    /// Work the person is waiting on to see the next frame: a shield's configuration.
    case userInteractive
    /// Work the person asked for and waits on: a shield button's answer, the companion app.
    case userInitiated
    /// Work whose result the person does not wait on: monitoring, reports, notifications.
    case utility
    /// Work the person never sees happen.
    case background
}
