import CProcessControl

/// Gives the heap's freed memory back to the system after a burst: glibc keeps what a process freed for its next
/// allocations, so without this the queues of peers that were dropped (a slow consumer's, a churning client's) would
/// stay the broker's resident memory for good. A sign that much was freed — a session ended, a delivery dropped for a
/// full queue — opens a short window in which the heap is trimmed (glibc's `malloc_trim`): libzmq frees a peer's
/// queue when its connection closes, which may come a little after the sign.
///
/// Trims come at most once a second; while new signs keep coming between trims (a flood being dropped, endless
/// churn) the least time between two doubles, up to `longestIntervalMilliseconds`: each trim walks the heap's free
/// lists, and a broker under a flood must not spend its time there. A quiet spell (`quietMilliseconds` without a sign)
/// sets it back to a second: churn slower than the window is a stream of signs too.
struct FreedMemoryReturn {
    /// How long after the last sign the heap is trimmed.
    static let windowMilliseconds: Int64 = 5_000
    /// The least time between two trims, after a quiet spell.
    static let intervalMilliseconds: Int64 = 1_000
    /// The most it grows to under signs that never stop.
    static let longestIntervalMilliseconds: Int64 = 16_000
    /// How long without a sign before the next one starts a new streak.
    static let quietMilliseconds: Int64 = 30_000

    private var lastSign: Int64?
    private var lastTrim: Int64?
    private var interval = Self.intervalMilliseconds
    /// Whether a sign came since the last trim.
    private var signSinceTrim = false
    private var endedSeen: UInt64 = 0
    private var droppedSeen: UInt64 = 0
    /// How many trims ran (for tests and status).
    private(set) var trims = 0

    /// Looks at what changed since the last call — sessions ended, deliveries dropped (both counted since the
    /// broker started) — and trims when due.
    mutating func observe(sessionsEnded ended: UInt64, dropped: UInt64, now: Int64) {
        if ended > endedSeen || dropped > droppedSeen {
            lastSign = now
            signSinceTrim = true
        }
        endedSeen = ended
        droppedSeen = dropped
        guard let sign = lastSign else { return }
        if now - sign > Self.quietMilliseconds {
            // Quiet: the next burst starts a new streak, trimmed promptly again.
            interval = Self.intervalMilliseconds
            lastTrim = nil
        }
        guard now - sign <= Self.windowMilliseconds else { return }
        if let last = lastTrim, now - last < interval { return }
        if lastTrim != nil, signSinceTrim { interval = min(interval * 2, Self.longestIntervalMilliseconds) }
        lastTrim = now
        signSinceTrim = false
        trims += 1
        shieldbus_release_free_heap()
    }
}
