import ShieldBusSDK

/// The program holding Profiles' extensions and app, one per principal class: its `main` runs it, and a test hosts it
/// in its own process.
public enum ProfilesPlugin {
    public static let program = PluginProgram.principalClasses([
        "ProfilesMonitor": ProfilesMonitor.init,
        "ProfilesShield": ProfilesShield.init,
        "ProfilesAction": ProfilesAction.init,
        "ProfilesApp": ProfilesApp.init,
    ])
}
