import Foundation

/// What a device's state folder says without a device running on it: for tools and a resuming broker.
extension DeviceOS {
    /// Where the scenario played on the state in `statePath` stopped (nil: none was played there).
    public static func scenarioProgress(statePath: String) throws -> ScenarioProgress? {
        guard FileManager.default.fileExists(atPath: statePath) else { return nil }
        return try DeviceStateStore(path: statePath).load(ScenarioProgress.self, key: ScenarioProgress.key)
    }

    /// The zone the device whose state is at `statePath` last ran in (nil: it never ran, or stored none).
    public static func timeZone(statePath: String) throws -> TimeZone? {
        guard FileManager.default.fileExists(atPath: statePath) else { return nil }
        return try DeviceStateStore(path: statePath).load(String.self, key: "clock.timeZone").flatMap(TimeZone.init(identifier:))
    }
}
