import BusClient
import BusProtocol
import Foundation

/// How the bus clock runs.
public enum ClockMode: Equatable, Sendable {
    /// Bus time is wall-clock time at the start, then runs on at the true rate: a step of the host's clock (an NTP
    /// correction, a person setting it) never moves it, back or forward.
    case real
    /// Bus time runs `speed` times faster than wall time, from a chosen start.
    case scaled(speed: Double)
    /// Bus time jumps from one scheduled instant to the next as soon as the bus is quiet: as fast as possible.
    case virtual

    public var name: String {
        switch self {
        case .real: return "real"
        case .scaled: return "scaled"
        case .virtual: return "virtual"
        }
    }
}

/// The host's clocks a bus clock reads: the wall clock (ms since the epoch: it may step) and a clock that only runs
/// on, suspended time included (ms). Tests inject their own.
struct HostClocks: Sendable {
    var wall: @Sendable () -> Int64
    var elapsed: @Sendable () -> Int64

    static let system = HostClocks(
        wall: { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) },
        elapsed: {
            var now = timespec()
            clock_gettime(CLOCK_BOOTTIME, &now)  // CLOCK_MONOTONIC stops while a laptop sleeps; the wall clock does not
            return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
        })
}

/// The bus clock — the only source of time plugins ever see — in any of the three modes.
/// Only the broker advances virtual time. A tool may pause it, change its speed and move it forward (`ClockControl`):
/// never back.
public final class BusClock {
    /// The mode it runs in: the configured one, until a control changes the speed of a real or scaled clock (it then
    /// runs scaled) or moves a real clock (bus time is no longer the wall clock's: scaled at ×1).
    public private(set) var clockMode: ClockMode
    /// Whether a control paused it: bus time stands still until `play`.
    public private(set) var isPaused = false
    private let host: HostClocks
    private var virtualNow: BusTime
    private var startBusTime: BusTime
    /// The host's elapsed-time clock when bus time stood at `startBusTime` (real and scaled time run on from it).
    private var startWall: Int64
    private var isRunning = false
    /// While a due timer runs in real or scaled time: its own instant, so a broker that was late (a stall on a
    /// loaded machine) still stamps what the timer sets off when it was due, not when it got round to it.
    private var heldAt: BusTime?

    /// A clock in `mode` whose bus time starts at `start` (ignored for `.real`).
    public convenience init(mode: ClockMode, start: BusTime? = nil) {
        self.init(mode: mode, start: start, host: .system)
    }

    init(mode: ClockMode, start: BusTime?, host: HostClocks) {
        clockMode = mode
        self.host = host
        startBusTime = mode == .real ? host.wall() : start ?? host.wall()
        virtualNow = startBusTime
        startWall = host.elapsed()
    }

    /// `real`, `scaled` or `virtual`.
    public var mode: String { clockMode.name }

    /// Scaled time starts running from its start now, when the bus starts: what the process did before
    /// (reading the configuration and the device's state) must not use up bus time — at 36,000× a slow
    /// start-up of 50 ms would be half an hour of the scenario gone.
    /// Only the first time: a broker that runs again on the same clock continues its time.
    func startRunning() {
        guard !isRunning else { return }
        isRunning = true
        // Real time ran on meanwhile (from the wall clock at start, or where a previous broker got): it goes on from here.
        if clockMode == .real { startBusTime = now() }
        startWall = host.elapsed()
    }

    /// Bus time now.
    public func now() -> BusTime {
        if let heldAt { return heldAt }
        if isPaused && !isVirtual { return startBusTime }
        switch clockMode {
        case .real: return startBusTime + (host.elapsed() - startWall)
        case .scaled(let speed): return startBusTime + BusTime(Double(host.elapsed() - startWall) * speed)
        case .virtual: return virtualNow
        }
    }

    /// Wall milliseconds until bus time reaches `time` (0 when it has; virtual time never reaches it by itself).
    func wallMilliseconds(until time: BusTime) -> Int64 {
        if isPaused { return time <= now() ? 0 : Int64.max }
        switch clockMode {
        case .real: return max(0, time - now())
        case .scaled(let speed): return max(0, Int64((Double(time - now()) / speed).rounded(.up)))
        case .virtual: return time <= virtualNow ? 0 : Int64.max
        }
    }

    var isVirtual: Bool { clockMode == .virtual }

    /// How far a scaled clock moves in a second of wall time (nil for the others: real time is the wall clock's,
    /// virtual time moves only when the broker moves it).
    var scaledMillisecondsPerWallSecond: Int64? {
        if case .scaled(let speed) = clockMode, !isPaused { return Int64((1_000 * speed).rounded(.up)) }
        return nil
    }

    /// A restarted broker's clock never runs backwards: a real or scaled clock goes on from `time` (where the last
    /// broker stopped) if that is later than its start (for real time: the host's clock was set back while no broker
    /// ran). Virtual time is the scenario's, and
    /// a scenario continued after a crash (`continuingTheRun`) goes on from `time` too when that is later than the
    /// step it resumes at: a timer that fired after that step (a threshold between two steps) was journaled and saved
    /// at its own time, and the resumed journal must not go back before it.
    func resume(notBefore time: BusTime, continuingTheRun: Bool) {
        if isVirtual {
            if continuingTheRun { virtualNow = max(virtualNow, time) }
            return
        }
        // Before `startRunning` the clock stands at its start; once running it is moved on, never back.
        if !isRunning, case .scaled = clockMode { startBusTime = max(startBusTime, time); return }
        let current = now()
        guard time > current else { return }
        startBusTime += time - current
    }

    /// Runs `body` with bus time standing at `time` (real and scaled time; virtual time is moved by `advance`).
    func holding<T>(at time: BusTime, _ body: () -> T) -> T {
        precondition(!isVirtual && heldAt == nil, "only a late timer of real or scaled time holds the clock, one at a time")
        heldAt = time
        defer { heldAt = nil }
        return body()
    }

    /// Moves virtual time forward (never back).
    func advance(to time: BusTime) {
        precondition(isVirtual, "only virtual time is advanced by the broker")
        virtualNow = max(virtualNow, time)
    }

    // MARK: Controls (`ClockControl`)

    /// Bus time stands still (virtual time no longer jumps to the next timer).
    func pause() {
        guard !isPaused else { return }
        if !isVirtual { rebase() }
        isPaused = true
    }

    /// Bus time runs again from where it stood.
    func play() {
        guard isPaused else { return }
        isPaused = false
        if !isVirtual { startWall = host.elapsed() }
    }

    /// A real or scaled clock runs `speed` times faster than wall time from now on (scaled, whatever it was).
    func setSpeed(_ speed: Double) {
        precondition(!isVirtual && speed > 0, "only a real or scaled clock has a speed")
        rebase()
        clockMode = .scaled(speed: speed)
    }

    /// Moves bus time forward to `time` (never back); a real clock runs on from there scaled at ×1.
    func move(to time: BusTime) {
        guard time > now() else { return }
        if isVirtual {
            virtualNow = time
            return
        }
        if clockMode == .real { clockMode = .scaled(speed: 1) }
        startBusTime = time
        startWall = host.elapsed()
    }

    /// Real and scaled time run on from bus time now (before a change of speed or a pause).
    private func rebase() {
        let current = now()
        if clockMode == .real { clockMode = .scaled(speed: 1) }
        startBusTime = current
        startWall = host.elapsed()
    }
}

/// Actions due at bus times, in time order and, within one instant, in the order they were scheduled.
struct TimerQueue {
    struct Entry {
        let time: BusTime
        let order: UInt64
        let id: UInt64
        let action: () -> Void
    }

    private var entries: [Entry] = []  // a binary min-heap on (time, order)
    /// Entries scheduled no earlier than the one before them (a scenario's steps, planned at once), in (time, order)
    /// order: popped from the front, they keep the heap small for the timers that come and go meanwhile (the clock's
    /// minute). Whichever of the two fronts comes first in (time, order) is due first, as in one heap.
    private var inOrder: [Entry] = []
    private var inOrderHead = 0
    private var cancelled = Set<UInt64>()
    private var nextOrder: UInt64 = 0

    var isEmpty: Bool { entries.count + inOrder.count - inOrderHead == cancelled.count }

    @discardableResult
    mutating func schedule(at time: BusTime, _ action: @escaping () -> Void) -> UInt64 {
        nextOrder += 1
        let entry = Entry(time: time, order: nextOrder, id: nextOrder, action: action)
        if inOrderHead == inOrder.count || time >= inOrder[inOrder.count - 1].time {
            inOrder.append(entry)
        } else {
            entries.append(entry)
            siftUp(entries.count - 1)
        }
        return nextOrder
    }

    mutating func cancel(_ id: UInt64) { cancelled.insert(id) }

    /// Moves every pending entry `milliseconds` later (the same shift for all keeps the heap's order).
    mutating func postpone(by milliseconds: Int64) {
        entries = entries.map { Entry(time: $0.time + milliseconds, order: $0.order, id: $0.id, action: $0.action) }
        inOrder = inOrder[inOrderHead...].map { Entry(time: $0.time + milliseconds, order: $0.order, id: $0.id, action: $0.action) }
        inOrderHead = 0
    }

    /// The earliest pending time.
    mutating func nextTime() -> BusTime? {
        dropCancelledHead()
        return earliestIsInOrder.map { $0 ? inOrder[inOrderHead].time : entries[0].time }
    }

    /// Removes and returns the earliest entry if it is due at or before `time`.
    mutating func popDue(atOrBefore time: BusTime) -> Entry? {
        dropCancelledHead()
        guard let isInOrder = earliestIsInOrder, (isInOrder ? inOrder[inOrderHead].time : entries[0].time) <= time else { return nil }
        return popFirst()
    }

    /// Whether the earliest entry is the front of those in order (else the heap's top); nil when there is none. Its
    /// fields are read where it lies: a copy of it would retain and release its action.
    private var earliestIsInOrder: Bool? {
        let hasInOrder = inOrderHead < inOrder.count
        guard !entries.isEmpty else { return hasInOrder ? true : nil }
        guard hasInOrder else { return false }
        return (inOrder[inOrderHead].time, inOrder[inOrderHead].order) < (entries[0].time, entries[0].order)
    }

    private mutating func dropCancelledHead() {
        // Asked before every timer: with nothing cancelled (the usual case) no id is looked up.
        while !cancelled.isEmpty, let isInOrder = earliestIsInOrder, cancelled.contains(isInOrder ? inOrder[inOrderHead].id : entries[0].id) {
            cancelled.remove(isInOrder ? inOrder[inOrderHead].id : entries[0].id)
            _ = popFirst()
        }
    }

    /// Removes and returns the earliest entry (there is one).
    private mutating func popFirst() -> Entry {
        if earliestIsInOrder == true {
            let next = inOrder[inOrderHead]
            inOrderHead += 1
            // The entries gone by (and their actions) are let go once they are half the list: each is moved once
            // at most on average.
            if inOrderHead * 2 >= inOrder.count {
                inOrder.removeFirst(inOrderHead)
                inOrderHead = 0
            }
            return next
        }
        return popHeapFirst()
    }

    private mutating func popHeapFirst() -> Entry {
        let first = entries[0]
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown(0)
        }
        return first
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        (entries[a].time, entries[a].order) < (entries[b].time, entries[b].order)
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < entries.count && less(left, smallest) { smallest = left }
            if right < entries.count && less(right, smallest) { smallest = right }
            if smallest == parent { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
