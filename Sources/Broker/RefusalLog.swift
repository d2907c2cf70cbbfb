/// When to write a log line about a refusal: at most one a second for each kind, carrying how many refusals it
/// stands for, so a hostile client can neither drown the log nor fill the disk with it (docs/security.md § 4).
/// Every refusal is still counted in `status`; only the lines are thinned.
struct RefusalLog {
    static let intervalMilliseconds: Int64 = 1_000

    private var lastLine: [String: Int64] = [:]
    private var unlogged: [String: Int] = [:]

    /// A refusal of `kind` (an error code: a closed set, so the tables stay small) at monotonic `now`: the number
    /// of refusals the line to write now stands for (this one included), or nil when this one waits for a later line.
    mutating func refusal(_ kind: String, now: Int64) -> Int? {
        let count = unlogged[kind, default: 0] + 1
        if let last = lastLine[kind], now - last < Self.intervalMilliseconds {
            unlogged[kind] = count
            return nil
        }
        lastLine[kind] = now
        unlogged[kind] = 0
        return count
    }
}
