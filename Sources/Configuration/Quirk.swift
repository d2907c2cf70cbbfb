// Quirk: the behaviours of real devices a configuration or a profile switches on, by the names files use.
/// The behaviours of real devices the seeds had to discover, each switchable on its own.
public enum Quirk: String, CaseIterable, Codable, Sendable {
    /// DeviceActivity callbacks scheduled more than about 45 minutes ahead fire early, late, or not at all.
    case unreliableFarSchedules = "unreliable-far-schedules"
    /// `startMonitoring` on an already-monitored name first stops it, calling `intervalDidEnd`.
    case restartingMonitoringEndsInterval = "start-monitoring-ends-interval"
    /// DeviceActivity callbacks happen on whole minutes only.
    case wholeMinuteCallbacks = "whole-minute-callbacks"
    /// Extension processes are started for a callback and ended after it, losing their memory.
    case shortLivedExtensions = "short-lived-extensions"
    /// A backgrounded app is suspended: its timers stop until it comes back.
    case suspendedBackgroundApps = "suspended-background-apps"
    /// An async task of a backgrounded app stops at its next suspension point.
    case suspendedAsyncTasks = "suspended-async-tasks"
    /// A fault, in no profile: `startMonitoring` announces `intervalDidStart` at once, whatever the schedule — as an
    /// interval starts when a schedule's wall times already run (a window meant for the next device day) or the OS
    /// misreads them (a skipped hour). It tests a product's loop guard; a configuration switches it on (`quirks:`).
    case startsIntervalsAtOnce = "starts-intervals-at-once"

    /// The faults: no profile turns them on.
    public static let faults: Set<Quirk> = [.startsIntervalsAtOnce]

    /// What the quirk does, for `--help` and the docs.
    public var summary: String {
        switch self {
        case .unreliableFarSchedules: return "callbacks scheduled more than ~45 min ahead fire early, late or never"
        case .restartingMonitoringEndsInterval: return "startMonitoring on a monitored name calls intervalDidEnd first"
        case .wholeMinuteCallbacks: return "DeviceActivity callbacks fire on whole minutes"
        case .shortLivedExtensions: return "extensions run per callback and lose their memory"
        case .suspendedBackgroundApps: return "a backgrounded app's timers stop"
        case .suspendedAsyncTasks: return "a backgrounded app's async task stops mid-way"
        case .startsIntervalsAtOnce: return "(a fault, in no profile) startMonitoring announces intervalDidStart at once"
        }
    }
}
