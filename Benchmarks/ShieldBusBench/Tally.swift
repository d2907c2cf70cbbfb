/// One subscriber's account of a run: what arrived, when the last one did, and anything missing or out of order.
///
/// Each subscriber owns its tally on its own thread; the main thread reads it only after joining that thread.
struct Tally {
    let name: String
    /// Events counted on arrival.
    var received = 0
    /// When the last event arrived (monotonic ns).
    var lastArrival: UInt64 = 0
    /// Events that never arrived: holes in the delivery or event numbers, plus any shortfall at the end.
    var missing = 0
    /// Events whose number went backwards or repeated.
    var outOfOrder = 0
    /// For the broker: holes in the global sequence numbers (another event took a seq, or one was lost).
    var seqGaps = 0

    init(name: String) { self.name = name }

    /// Records an arrival whose own counter is `number`, expected to be `expected`; returns the next expected.
    mutating func arrived(number: Int, expected: Int, at time: UInt64) -> Int {
        received += 1
        lastArrival = time
        if number > expected { missing += number - expected }
        if number < expected { outOfOrder += 1; return expected }
        return number + 1
    }
}
