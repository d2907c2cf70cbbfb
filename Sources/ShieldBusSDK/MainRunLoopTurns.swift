import CProcessControl
import Foundation

/// When the plugin's thread turns the main run loop between events (`PluginRuntime.runMainQueue`): whenever work waits
/// on the main queue — libdispatch signals it (`shieldbus_main_queue_is_signalled`), so main-queue and `@MainActor`
/// work queued while an event was handled still runs before the next one, as at a turn per event — and otherwise at
/// the first look an `interval` or more after the last turn, for what a turn runs that signals nothing (a `Timer` or a
/// block scheduled on the main run loop itself: while events come faster than that, up to an interval late). A turn
/// costs many times the look, and most events leave nothing queued.
struct MainRunLoopTurns {
    /// The longest a turn waits when nothing was signalled, in nanoseconds (10 ms).
    static let interval: UInt64 = 10_000_000
    /// When the last turn was due (`uptimeNanoseconds`); nil before the first.
    private var last: UInt64?

    /// Whether the loop should turn now (always when `force`d); a turn found due is taken to run.
    mutating func isDue(at now: UInt64 = DispatchTime.now().uptimeNanoseconds, force: Bool = false) -> Bool {
        if !force, let last, now &- last < Self.interval, shieldbus_main_queue_is_signalled() == 0 { return false }
        last = now
        return true
    }

    /// Whether a turn could run anything (asked on the main thread): work waits on the main queue, or the main run loop
    /// was made — what is scheduled on it (a timer, a block) needs it made and signals nothing. A short-lived
    /// extension's launch that queues nothing then never makes the main run loop, which a fresh process pays for.
    static var mayRunAnything: Bool { shieldbus_run_loop_exists() != 0 || shieldbus_main_queue_is_signalled() != 0 }
}
