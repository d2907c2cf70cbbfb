import ShieldBusSDK

/// The program holding Bedtime's extensions and app, one per principal class: its `main` runs it, and a test hosts it
/// in its own process.
public enum BedtimePlugin {
    public static let program = PluginProgram.principalClasses([
        "BedtimeMonitor": BedtimeMonitor.init,
        "BedtimeShield": BedtimeShield.init,
        "BedtimeAction": BedtimeAction.init,
        "BedtimeApp": BedtimeApp.init,
    ])
}
