// DeviceActivity, as iOS names it: schedules and events to monitor, the centre that starts and stops monitoring,
// and the monitor extension point. Plugins import it exactly as extension code does on iOS.
@_exported import ScreenTime
import DeviceAPI
import Foundation
import ShieldBusSDK

/// Starts and stops DeviceActivity monitoring (`DeviceActivityCenter`). As on iOS, `startMonitoring` throws the
/// OS's validation error; `stopMonitoring`, `activities` and `events(for:)` do not throw, so a failure of theirs
/// is reported on the bus (`state.call-failed`). The `monitored…` forms throw (ShieldBus's).
public struct DeviceActivityCenter {
    public typealias MonitoringError = DeviceActivityMonitoringError

    public init() {}

    /// Starts monitoring `activity` during `schedule`, watching `events`. Throws the OS's validation error
    /// (interval too short or long, too many activities, invalid components, unauthorized) as a `PluginError.device`.
    public func startMonitoring(_ activity: DeviceActivityName, during schedule: DeviceActivitySchedule,
                                events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:]) throws {
        _ = try PluginRuntime.running().call(DeviceTopic.startMonitoringRequest, StartMonitoring(activity: activity, schedule: schedule, events: events), expecting: NoValue.self)
    }

    /// Stops monitoring the given activities (all of them when empty).
    public func stopMonitoring(_ activities: [DeviceActivityName] = []) {
        SilentCall.report("DeviceActivityCenter().stopMonitoring(\(activities.map(\.rawValue)))") { try stopMonitoringActivities(activities) }
    }

    /// The activities being monitored.
    public var activities: [DeviceActivityName] {
        SilentCall.report("DeviceActivityCenter().activities") { try monitoredActivities() } ?? []
    }

    /// An activity's events as the OS holds them — in the current tokens, even after an OS update regenerated them.
    public func events(for activity: DeviceActivityName) -> [DeviceActivityEvent.Name: DeviceActivityEvent] {
        SilentCall.report("DeviceActivityCenter().events(for: \(activity.rawValue))") { try monitoredEvents(for: activity) } ?? [:]
    }

    /// Stops monitoring the given activities (all of them when empty), throwing when the OS refuses.
    public func stopMonitoringActivities(_ activities: [DeviceActivityName] = []) throws {
        _ = try PluginRuntime.running().call(DeviceTopic.stopMonitoringRequest, StopMonitoring(activities: activities), expecting: NoValue.self)
    }

    /// The activities being monitored, throwing when the OS does not answer.
    public func monitoredActivities() throws -> [DeviceActivityName] {
        try PluginRuntime.running().call(DeviceTopic.activitiesRequest, NoValue(), expecting: MonitoredActivities.self).activities
    }

    /// An activity's events, throwing when the OS does not answer.
    public func monitoredEvents(for activity: DeviceActivityName) throws -> [DeviceActivityEvent.Name: DeviceActivityEvent] {
        try PluginRuntime.running().call(DeviceTopic.eventsRequest, MonitoredEvents(activity: activity), expecting: MonitoredEvents.self).events
    }
}
