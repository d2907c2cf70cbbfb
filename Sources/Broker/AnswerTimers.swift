// AnswerTimers: the OS's reply deadlines on its requests to a role, started as wall timers once the answerer holds the request.

import BusClient

/// `AnswerDeadlines` is the bookkeeping; this starts each deadline's wall timer when its turn comes, and cancels it
/// when the reply does.
final class AnswerTimers {
    private var deadlines = AnswerDeadlines()
    /// Started deadlines' wall timers, by correlation id.
    private var timers: [String: UInt64] = [:]
    private let time: TimeKeeper

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
        for deadline in started {
            timers[deadline.corr] = time.scheduleWall(at: monotonicMilliseconds() + deadline.milliseconds) { [unowned self] in
                timers[deadline.corr] = nil
                deadline.action()
            }
        }
    }
}
