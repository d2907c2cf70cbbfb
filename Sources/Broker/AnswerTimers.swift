// AnswerTimers: the OS's reply deadlines on its requests to a role, started as wall timers once the answerer holds the request.

import BusClient
import Foundation

/// `AnswerDeadlines` is the bookkeeping; this starts each deadline's wall timer when its turn comes, and cancels it
/// when the reply does.
///
/// In virtual time the deadline is judged by the answerer's progress (`ProgressWatch`), as the wait for its
/// acknowledgements is: an answerer still at work when it passes (runnable, or using CPU since the turn began) is late
/// on a machine busy with other work, not too slow for the OS, and is looked at again a deadline later, up to the busy
/// limit; one blocked with no CPU used, or ended, is out of time at once — the default shield, or no action, as on
/// iOS. Otherwise the shield drawn, or what a button did, would depend on the machine's load.
final class AnswerTimers {
    private var deadlines = AnswerDeadlines()
    /// Started deadlines' wall timers, by correlation id.
    private var timers: [String: UInt64] = [:]
    private let time: TimeKeeper
    /// The process of the plugin of that name (its program's), if it has one now: what a deadline's look reads.
    var process: (String) -> pid_t? = { _ in nil }
    /// Readings of the answerers' processes, by correlation id (virtual time).
    private var progress = ProgressWatch<String>()

    init(time: TimeKeeper) { self.time = time }

    var isEmpty: Bool { deadlines.isEmpty }

    /// Runs `action` once the plugin that the OS's request `corr` (emitted next) goes to has had it for
    /// `milliseconds` of wall time, counted from the turn it is handed it; at once when nobody will take it.
    func add(corr: String, milliseconds: Int64, action: @escaping () -> Void) {
        deadlines.add(corr: corr, milliseconds: milliseconds, action: action)
    }

    func cancel(corr: String) {
        if deadlines.remove(corr: corr) { return }
        if let timer = timers.removeValue(forKey: corr) { time.cancelWall(timer) }
        progress.forget(corr)
    }

    /// The OS's request `corr` was sequenced as `seq`, for `answerer` (nil: nobody will take it, so it starts now).
    func sequenced(corr: String, seq: UInt64, answerer: String?) {
        if let now = deadlines.sequenced(corr: corr, seq: seq, answerer: answerer) { start([now]) }
    }

    /// `seq` was handed to `plugin`'s process; `inTurn`: it takes effect when the plugin's turn comes (virtual time,
    /// an acknowledging plugin), otherwise now.
    func handedOver(seq: UInt64, to plugin: String, inTurn: Bool) {
        deadlines.delivered(seq: seq, to: plugin)
        if !inTurn { start(deadlines.start(heldBy: plugin)) }
    }

    /// `plugin`'s turn began: the OS's requests in it are in its hands now.
    func turnTaken(by plugin: String) { start(deadlines.start(heldBy: plugin)) }

    /// Requests whose answerer will not come back to take them (it failed, or stopped for good) start now.
    func startUnreachable(isReachable: (String) -> Bool) { start(deadlines.start(unreachable: isReachable)) }

    private func start(_ started: [AnswerDeadlines.Deadline]) {
        let now = monotonicMilliseconds()
        for deadline in started {
            // A reading as the answerer takes the request, for the look at the deadline to compare the CPU used since.
            if time.clock.isVirtual, let pid = deadline.answerer.flatMap(process) { progress.read([(deadline.corr, pid)]) }
            arm(deadline, at: now + deadline.milliseconds, startedAt: now)
        }
    }

    private func arm(_ deadline: AnswerDeadlines.Deadline, at instant: Int64, startedAt: Int64) {
        timers[deadline.corr] = time.scheduleWall(at: instant) { [unowned self] in
            let now = monotonicMilliseconds()
            if time.clock.isVirtual, let pid = deadline.answerer.flatMap(process),
               progress.waitsOn(deadline.corr, pid: pid, waited: now - startedAt, limit: deadline.milliseconds) {
                return arm(deadline, at: now + deadline.milliseconds, startedAt: startedAt)
            }
            progress.forget(deadline.corr)
            timers[deadline.corr] = nil
            deadline.action()
        }
    }
}
