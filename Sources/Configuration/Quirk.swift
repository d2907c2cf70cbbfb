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

    // Behaviours developers report (docs/fidelity.md): in no profile, a configuration switches them on.

    /// `startMonitoring` with start components that already matched earlier on the device's day fires every event's
    /// threshold at once.
    case pastStartFiresThresholds = "past-start-fires-thresholds"
    /// A schedule whose start and end mix time-only components and full-date ones is taken without an error (Apple's
    /// rule, which faithful keeps, refuses mismatched components) and never calls `intervalDidStart`.
    case mixedComponentsNeverStart = "mixed-components-never-start"
    /// After midnight, the threshold callbacks of the day before are delivered again when the next interval starts.
    case thresholdsRedeliveredAfterMidnight = "thresholds-redelivered-after-midnight"

    // The bugs of iOS releases (`IOSRelease`): a release turns them on, a configuration may too.

    /// iOS 17.5.1: an update changes the tokens of installed apps and carries none of the OS's own settings over.
    case tokensChangeUnderShields = "tokens-change-under-shields"
    /// iOS 26.2 RC: every threshold event of a running interval fires at the first pickup of the day.
    case thresholdsAtFirstPickup = "thresholds-at-first-pickup"
    /// iOS 26.3.1: the DeviceActivityMonitor extension is never woken.
    case monitorNeverWoken = "monitor-never-woken"

    /// The faults: no profile turns them on.
    public static let faults: Set<Quirk> = [.startsIntervalsAtOnce]
    /// What developers report of devices, less often than the profile's quirks: no profile turns them on.
    public static let reported: Set<Quirk> = [.pastStartFiresThresholds, .mixedComponentsNeverStart, .thresholdsRedeliveredAfterMidnight]
    /// Bugs of one iOS release each: only a release (`--ios`) or a configuration turns them on.
    public static let releaseBugs: Set<Quirk> = [.tokensChangeUnderShields, .thresholdsAtFirstPickup, .monitorNeverWoken]
    /// The quirks no profile turns on.
    public static let outsideProfiles = faults.union(reported).union(releaseBugs)

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
        case .pastStartFiresThresholds: return "(reported, in no profile) startMonitoring after the day's start time fires every threshold at once"
        case .mixedComponentsNeverStart: return "(reported, in no profile) a schedule mixing time-only and full-date components is taken and never starts"
        case .thresholdsRedeliveredAfterMidnight: return "(reported, in no profile) the day before's thresholds are delivered again after midnight"
        case .tokensChangeUnderShields: return "(iOS 17.5.1) an update changes the tokens and the stores keep the old ones: shields go blank"
        case .thresholdsAtFirstPickup: return "(iOS 26.2 RC) every threshold fires at the first pickup of the day"
        case .monitorNeverWoken: return "(iOS 26.3.1) the DeviceActivityMonitor extension is never woken"
        }
    }
}

/// An iOS release whose documented Screen Time bugs the device reproduces (`--ios`, `ios:`), on top of its profile.
public enum IOSRelease: String, CaseIterable, Codable, Sendable {
    case iOS17_5_1 = "17.5.1"
    case iOS26_2RC = "26.2-rc"
    case iOS26_3_1 = "26.3.1"

    /// The bugs the release turns on.
    public var quirks: Set<Quirk> {
        switch self {
        case .iOS17_5_1: return [.tokensChangeUnderShields]
        case .iOS26_2RC: return [.thresholdsAtFirstPickup]
        case .iOS26_3_1: return [.monitorNeverWoken]
        }
    }

    /// The release's bug in a line, for `--help`, reports and the docs.
    public var summary: String {
        switch self {
        case .iOS17_5_1: return "tokens changed under installed apps: shields naming the old tokens went blank"
        case .iOS26_2RC: return "every DeviceActivity threshold fired at the first pickup of the day"
        case .iOS26_3_1: return "the DeviceActivityMonitor extension was never woken"
        }
    }

    /// The names `--ios` and `ios:` take, in order.
    public static var names: [String] { allCases.map(\.rawValue) }
}
