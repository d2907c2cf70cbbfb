import CProcessControl

/// Gives the heap's freed memory back to the system after a burst: glibc keeps what a process freed for its next
/// allocations, so without this the queues of peers that were dropped (a slow consumer's, a churning client's) would
/// stay the broker's resident memory for good. A sign that much was freed — a session ended, a delivery dropped for a
/// full queue — opens a short window in which the heap is trimmed (glibc's `malloc_trim`) at most once a second: libzmq frees
/// a peer's queue when its connection closes, which may come a little after the sign.
struct FreedMemoryReturn {
    /// How long after the last sign the heap is trimmed.
    static let windowMilliseconds: Int64 = 5_000
    /// The least time between two trims: a trim walks the heap's free lists.
    static let intervalMilliseconds: Int64 = 1_000

    private var lastSign: Int64?
    private var lastTrim: Int64?
    private var sessionsSeen = 0
    private var droppedSeen: UInt64 = 0
    /// How many trims ran (for tests and status).
    private(set) var trims = 0

    /// Looks at what changed since the last call — fewer sessions, more dropped deliveries — and trims when due.
    mutating func observe(sessions: Int, dropped: UInt64, now: Int64) {
        if sessions < sessionsSeen || dropped > droppedSeen { lastSign = now }
        sessionsSeen = sessions
        droppedSeen = dropped
        guard let sign = lastSign, now - sign <= Self.windowMilliseconds,
              lastTrim.map({ now - $0 >= Self.intervalMilliseconds }) ?? true else { return }
        lastTrim = now
        trims += 1
        shieldbus_release_free_heap()
    }
}
