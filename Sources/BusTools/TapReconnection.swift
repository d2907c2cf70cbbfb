// TapReconnection: what a tap says when it follows a broker again — the events that went by, or a new bus.
import BusProtocol
import Foundation

/// What a tap that reconnects says about the gap. A broker restarted on its state numbers on past the numbers the last
/// one set aside (protocol.md § 7.1; its welcome's `firstSeq` says where): those between the tap's last event and
/// `firstSeq` were never sent, and only the new run's events up to the welcome went by — kept only where the broker's
/// `--journal` still holds them (a restarted broker writes its journal anew unless it resumes a scenario). A broker
/// started on a fresh state begins a new bus: numbers start again at #1, and saying "#41–#52 went by" would pass the
/// new bus's events off as the old one's.
public struct TapReconnection {
    /// The last event the tap received (any, shown or not): a journal line with its number must be this one.
    public var lastSeen: Envelope?
    /// The highest sequence number the tap knew of (an event's or a welcome's).
    public var lastKnownSeq: UInt64
    /// The first number of the broker run the tap followed last (its welcome's `firstSeq`; nil: not said).
    public var runFirstSeq: UInt64?
    /// Whether the tap received every event (it subscribes to all topics): then none of the last run's numbers after
    /// its last event was sent to anyone.
    public var seesEveryEvent: Bool

    public init(lastSeen: Envelope?, lastKnownSeq: UInt64, runFirstSeq: UInt64? = nil, seesEveryEvent: Bool = false) {
        self.lastSeen = lastSeen
        self.lastKnownSeq = lastKnownSeq
        self.runFirstSeq = runFirstSeq
        self.seesEveryEvent = seesEveryEvent
    }

    /// Whether `welcome` comes from a new bus: a run that numbered from at most the tap's last number, or — from a
    /// broker that does not say where its run began — numbers or bus time behind what the tap saw, or a journal that
    /// numbers an event up to the last seen one's number otherwise (on one bus, numbers and times rise together: a line
    /// numbered before it but stamped after it, or another event under its number, is a new bus's).
    public func isNewBus(_ welcome: Welcome, journalPath: String?) -> Bool {
        if welcome.seq < lastKnownSeq { return true }
        if let first = welcome.firstSeq, first != runFirstSeq { return first <= lastKnownSeq }
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
        if let first = welcome.firstSeq, first != runFirstSeq, first > lastKnownSeq + 1 {
            return (restartNotice(firstSeq: first, welcome: welcome, journalPath: journalPath), max(welcome.seq, lastKnownSeq))
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
            // A broker that does not say where its run began: a restarted one numbers on past what the last one had set
            // aside (`DeliveryLedger`), most of it unused; what the last one did number after the tap's last event went
            // with the journal the new one wrote anew.
            return ("⚠ the bus went from #\(lastKnownSeq) to #\(welcome.seq) while the tap was away: #\(kept)–#\(welcome.seq) are in the broker's "
                    + "--journal (`shieldbus tap --from \(kept)`); #\(first)–#\(kept - 1) were the last broker's — numbers it set aside unused, "
                    + "or events lost with the journal the restarted broker wrote anew", welcome.seq)
        }
    }

    /// A broker restarted on the same state, numbering from `firstSeq`: the last run's numbers after the tap's last
    /// event, which were never sent (or, to a tap that hears only some topics and did not see that run stop, may have
    /// been events of other topics), and the new run's events before the welcome, which did go by.
    private func restartNotice(firstSeq first: UInt64, welcome: Welcome, journalPath: String?) -> String {
        let skipped = "#\(lastKnownSeq + 1)–#\(first - 1)"
        let sawItStop = lastSeen?.topic == Topic.busStopping
        let unused = seesEveryEvent || sawItStop
            ? "\(skipped) were never sent: numbers the last broker set aside"
            : "\(skipped) were the last broker's: numbers it set aside unused, or events outside the tap's topics"
        var text = "⚠ the broker restarted on its state and numbers on from #\(first); \(unused)"
        guard welcome.seq >= first else { return text }
        text += "; its events #\(first)–#\(welcome.seq) went by while the tap was away"
        guard let journalPath else { return text + " (the broker writes no --journal: they are not kept)" }
        return text + (Self.firstLine(after: first - 1, through: welcome.seq, in: journalPath) == first
            ? " (in the broker's --journal: `shieldbus tap --from \(first)`)"
            : " (not in the broker's --journal)")
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
