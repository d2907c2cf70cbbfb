// TimeKeeper: timers on the bus clock and on the wall clock, and time moved on — in virtual time, whenever the bus is quiet.

import BusClient
import BusProtocol

/// What the timekeeper needs of the bus it keeps time for.
protocol QuietBus: AnyObject {
    var isStopping: Bool { get }
    /// Everything delivered has been handled and nothing is held: virtual time may move on.
    var isQuiet: Bool { get }
    /// The latest bus instant sequenced: a late timer is never stamped before it.
    var lastSequencedTime: BusTime { get }
    /// Sequences what observers held, if the bus has settled; whether there was any.
    func releaseHeldPublications() -> Bool
    /// Sequences what an action emitted.
    func drain()
    /// Saves what was sequenced and not saved yet (`Broker.saveSequenced`), before a timer or a quiet action acts: what
    /// the device does by itself (a scenario step, a schedule) is not done again after a kill, so the batches before
    /// it must not be lost with a later one's.
    func saveSequenced()
    /// Stops waiting for the sessions that left events unacknowledged too long (`ack-timeout`, after `waited` ms),
    /// except plugins still at work while `mayWaitOn` (a busy machine runs them late); whether any is still waited for.
    func excuseLaggards(waited: Int64, mayWaitOn: Bool) -> Bool
    /// The wait for quiet has lasted long enough to be worth a look: a first reading of the laggards' processes, for
    /// the first look at them to compare with.
    func readLaggards()
    /// The wait for quiet is over (the bus went quiet, or no one is waited for any more).
    func waitForQuietEnded()
}

/// Bus timers fire by the wall clock in real and scaled time; in virtual time the clock jumps to the next timer's
/// instant whenever the bus is quiet, so a virtual run is as fast as its plugins and deterministic. Wall timers
/// (reply deadlines, the start-up limit) keep wall time in every mode.
final class TimeKeeper {
    let clock: BusClock
    weak var bus: QuietBus?
    private var busTimers = TimerQueue()
    private var wallTimers = TimerQueue()
    /// Actions waiting for the bus to go quiet (everything delivered has been handled).
    private var quietActions: [() -> Void] = []
    /// Since when (wall ms) time has been waiting for the bus to go quiet: since the wait began, and since the last
    /// look at the laggards.
    private var waitingForQuietSince: Int64?
    private var waitingSinceLastLook: Int64?
    /// Whether the laggards' processes were read in this wait, for the first look to compare with.
    private var laggardsRead = false
    /// `bus.ackTimeoutMs`: how long a plugin's missing acknowledgements may hold time up.
    private let acknowledgementTimeout: Int64
    /// A control's move forward (`moveOn`): the instant it goes to, whether the clock runs on there, and what to do
    /// once it is there.
    private var target: (time: BusTime, runsOn: Bool, reached: () -> Void)?

    init(clock: BusClock, acknowledgementTimeout: Int64) {
        self.clock = clock
        self.acknowledgementTimeout = acknowledgementTimeout
    }

    /// Runs `action` at bus time `time` (at once if it has passed).
    @discardableResult
    func schedule(at time: BusTime, _ action: @escaping () -> Void) -> UInt64 { busTimers.schedule(at: time, action) }
    func cancel(_ id: UInt64) { busTimers.cancel(id) }

    /// Runs `action` at the wall instant `instant` (monotonic ms), whatever the bus clock does.
    @discardableResult
    func scheduleWall(at instant: Int64, _ action: @escaping () -> Void) -> UInt64 { wallTimers.schedule(at: instant, action) }
    func cancelWall(_ id: UInt64) { wallTimers.cancel(id) }

    /// Runs `action` once everything delivered so far has been handled (before virtual time moves on).
    func whenQuiet(_ action: @escaping () -> Void) { quietActions.append(action) }

    var hasQuietActions: Bool { !quietActions.isEmpty }
    func nextBusTimer() -> BusTime? { busTimers.nextTime() }

    /// Whether time moves on by itself as soon as the bus is quiet: virtual time not paused, or a control's move
    /// forward under way (in any mode).
    var movesOnWhenQuiet: Bool { target != nil || (clock.isVirtual && !clock.isPaused) }

    /// A control moves bus time forward to `time` as virtual time moves: from one timer to the next, each at its own
    /// instant once the bus is quiet (what plugins do about one timer is stamped before the next), then to `time`
    /// itself. The clock stands still meanwhile; at `time` it runs on if `runsOn`, and `reached` is called.
    func moveOn(to time: BusTime, runsOn: Bool, reached: @escaping () -> Void) {
        clock.pause()
        target = (time, runsOn, reached)
    }

    /// Whether a control's move forward is under way.
    var isMovingOn: Bool { target != nil }
    func nextWallTimer() -> Int64? { wallTimers.nextTime() }

    /// Fires the wall timers that are due.
    func fireDueWallTimers() {
        while let entry = wallTimers.popDue(atOrBefore: monotonicMilliseconds()) {
            bus?.saveSequenced()
            entry.action()
            bus?.drain()
        }
    }

    /// Fires due timers: by the wall clock in real and scaled time; in virtual time, jumping to the next scheduled
    /// instant whenever the bus is quiet. Call it only once the bus is ready.
    func advance() {
        guard let bus else { return }
        if target != nil { return moveOnToTarget(bus) }
        runQuietActions()
        if !clock.isVirtual {
            // A timer runs at its own instant (never before what is already sequenced): after a stall, timers
            // due meanwhile keep their order in bus time instead of all sharing the instant the broker woke at.
            while let entry = busTimers.popDue(atOrBefore: clock.now()) {
                clock.holding(at: max(entry.time, bus.lastSequencedTime)) {
                    bus.saveSequenced()
                    entry.action()
                    bus.drain()
                }
            }
            // Actions waiting for quiet must not wait forever for a plugin that stopped acknowledging.
            if !quietActions.isEmpty && !bus.isQuiet { excuseLaggardsIfWaitingTooLong() } else { endWaitForQuiet() }
            return
        }
        for _ in 0..<1_000 {  // bounded, so sockets are still polled during a long virtual run
            guard !bus.isStopping else { return }
            if bus.releaseHeldPublications() { continue }
            guard bus.isQuiet else {
                excuseLaggardsIfWaitingTooLong()
                return
            }
            endWaitForQuiet()
            if runQuietActions() { continue }  // they may have made the bus busy again
            guard !clock.isPaused, let next = busTimers.nextTime() else { return }
            clock.advance(to: next)
            // One timer at a time: what it sets off is handled before the next one due at the same instant runs.
            if let entry = busTimers.popDue(atOrBefore: next) {
                bus.saveSequenced()
                entry.action()
                bus.drain()
            }
        }
    }

    /// One stretch of a control's move forward: timer after timer up to the target, each once the bus is quiet.
    private func moveOnToTarget(_ bus: QuietBus) {
        for _ in 0..<1_000 {
            guard !bus.isStopping, let target else { return }
            if bus.releaseHeldPublications() { continue }
            guard bus.isQuiet else {
                excuseLaggardsIfWaitingTooLong()
                return
            }
            endWaitForQuiet()
            if runQuietActions() { continue }
            if let next = busTimers.nextTime(), next <= target.time {
                clock.move(to: next)
                if let entry = busTimers.popDue(atOrBefore: next) {
                    bus.saveSequenced()
                    entry.action()
                    bus.drain()
                }
                continue
            }
            clock.move(to: target.time)
            self.target = nil
            if target.runsOn { clock.play() }
            bus.saveSequenced()
            target.reached()
            bus.drain()
            return
        }
    }

    /// Runs the actions waiting for quiet, if the bus is quiet; returns whether any ran.
    @discardableResult
    private func runQuietActions() -> Bool {
        guard let bus, !quietActions.isEmpty, bus.isQuiet else { return false }
        let actions = quietActions
        quietActions = []
        for action in actions {
            bus.saveSequenced()
            action()
            bus.drain()
        }
        return true
    }

    /// The broker did not run for `milliseconds` (`Broker.excuseStall`): the wait for acknowledgements and every wall
    /// deadline (a reply the OS waits for, a tool's input) are counted from after it, so no plugin is given up on and
    /// no answer refused for the broker's own stall.
    func excuseStall(_ milliseconds: Int64) {
        waitingForQuietSince = waitingForQuietSince.map { min(monotonicMilliseconds(), $0 + milliseconds) }
        waitingSinceLastLook = waitingSinceLastLook.map { min(monotonicMilliseconds(), $0 + milliseconds) }
        wallTimers.postpone(by: milliseconds)
    }

    /// A plugin that stops acknowledging must not freeze time: after the limit it is no longer waited for — unless it
    /// is still at work (a machine busy with other work runs it late), then for up to `busyAcknowledgementLimit`.
    private func excuseLaggardsIfWaitingTooLong() {
        let now = monotonicMilliseconds()
        guard let since = waitingForQuietSince, let lastLook = waitingSinceLastLook else {
            (waitingForQuietSince, waitingSinceLastLook, laggardsRead) = (now, now, false)
            return
        }
        // Not at the wait's start: nearly every turn waits a moment for the plugins, and a reading costs a read of
        // `/proc` per plugin; a wait that lasted a tenth of the limit is worth one. The loop passes at least once a
        // heartbeat interval, so it comes well before the first look.
        if !laggardsRead, now - since >= acknowledgementTimeout / 10 {
            laggardsRead = true
            bus?.readLaggards()
        }
        guard now - lastLook > acknowledgementTimeout else { return }
        let waitsOn = bus?.excuseLaggards(waited: now - since, mayWaitOn: now - since < busyAcknowledgementLimit) ?? false
        if waitsOn { waitingSinceLastLook = now } else { endWaitForQuiet() }
    }

    private func endWaitForQuiet() {
        guard waitingForQuietSince != nil else { return }
        (waitingForQuietSince, waitingSinceLastLook) = (nil, nil)
        bus?.waitForQuietEnded()
    }

    /// The longest time a plugin still at work may hold time up without acknowledging.
    var busyAcknowledgementLimit: Int64 { ProcessProgress.busyLimit(for: acknowledgementTimeout) }
}
