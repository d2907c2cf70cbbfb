// TapReconnection: what a tap says when it follows a broker again — the events that went by, or a new bus.
import BusProtocol
import Foundation

/// What a tap that reconnects says about the gap. On the same bus (a broker restarted on its state goes on numbering),
/// the events between the last it knew of and the new welcome went by — kept only where the broker's `--journal`
/// still holds them: a restarted broker writes its journal anew unless it resumes a scenario. A broker started on a
/// fresh state begins a new bus: numbers start again at #1, and saying "#41–#52 went by" would pass the new bus's
/// events off as the old one's.
public struct TapReconnection {
    /// The last event the tap received (any, shown or not): a journal line with its number must be this one.
    public var lastSeen: Envelope?
    /// The highest sequence number the tap knew of (an event's or a welcome's).
    public var lastKnownSeq: UInt64

    public init(lastSeen: Envelope?, lastKnownSeq: UInt64) {
        self.lastSeen = lastSeen
        self.lastKnownSeq = lastKnownSeq
    }

    /// Whether `welcome` comes from a new bus: numbers or bus time behind what the tap saw, or a journal that numbers
    /// an event up to the last seen one's number otherwise (on one bus, numbers and times rise together: a line
    /// numbered before it but stamped after it, or another event under its number, is a new bus's).
    public func isNewBus(_ welcome: Welcome, journalPath: String?) -> Bool {
        if welcome.seq < lastKnownSeq { return true }
        guard let lastSeen else { return false }
        if welcome.time < lastSeen.time { return true }
        guard let journalPath, lastSeen.seq > 0, FileManager.default.fileExists(atPath: journalPath) else { return false }
        var renumbered = false
        _ = try? JournalHistory.read(path: journalPath, after: 0, through: lastSeen.seq, patienceMilliseconds: 0) { line in
            if line.seq == lastSeen.seq {
                renumbered = renumbered || line.topic != lastSeen.topic || line.time != lastSeen.time || line.source != lastSeen.source
            } else {
                renumbered = renumbered || line.time > lastSeen.time
            }
        }
        return renumbered
    }

    /// The notice for `welcome` (nil: nothing went by), and the number to count on from.
    public func notice(for welcome: Welcome, journalPath: String?) -> (text: String?, lastKnownSeq: UInt64) {
        if isNewBus(welcome, journalPath: journalPath) {
            let journal = journalPath == nil ? "" : "; its --journal was written anew"
            return ("⚠ a new bus: the broker started again from #1 (now at #\(welcome.seq))\(journal); events of the old bus after #\(lastKnownSeq) were not seen",
                    welcome.seq)
        }
        guard welcome.seq > lastKnownSeq else { return (nil, lastKnownSeq) }
        let first = lastKnownSeq + 1
        guard let journalPath else {
            return ("⚠ events #\(first)–#\(welcome.seq) went by while the tap was away (the broker writes no --journal: they are not kept)", welcome.seq)
        }
        switch Self.firstLine(after: lastKnownSeq, through: welcome.seq, in: journalPath) {
        case first?:
            return ("⚠ events #\(first)–#\(welcome.seq) went by while the tap was away (in the broker's --journal: `shieldbus tap --from \(first)`)", welcome.seq)
        case nil:
            return ("⚠ events #\(first)–#\(welcome.seq) went by while the tap was away (not in the broker's --journal: the restarted broker wrote it anew)",
                    welcome.seq)
        case let kept?:
            // A restarted broker numbers on past what the last one had set aside (`DeliveryLedger`), most of it unused;
            // what the last one did number after the tap's last event went with the journal the new one wrote anew.
            return ("⚠ the bus went from #\(lastKnownSeq) to #\(welcome.seq) while the tap was away: #\(kept)–#\(welcome.seq) are in the broker's "
                    + "--journal (`shieldbus tap --from \(kept)`); #\(first)–#\(kept - 1) were the last broker's — numbers it set aside unused, "
                    + "or events lost with the journal the restarted broker wrote anew", welcome.seq)
        }
    }

    /// The seq of the journal's first line numbered after `after` through `through`, if it has one (nil too when it
    /// cannot be read).
    static func firstLine(after: UInt64, through: UInt64, in path: String) -> UInt64? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        var found: UInt64?
        _ = try? JournalHistory.read(path: path, after: after, through: through, patienceMilliseconds: 0) { found = found ?? $0.seq }
        return found
    }
}
