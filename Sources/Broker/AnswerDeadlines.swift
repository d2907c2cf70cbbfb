/// The OS's deadlines for the answers to its requests to a role (the shield renderer's configuration, the action
/// delegate's response), each counted from the moment the answerer has the request in hand: the turn it is handed it.
///
/// A request to the renderer can wait for its turn behind another plugin's — the monitor whose write put the shield
/// up, still making calls, then its next process starting (a short-lived extension) — and in virtual time how long
/// that takes is process timing: a deadline counted from the request made the default shield, and where it landed in
/// the journal, depend on the machine's load. Only bookkeeping here; the broker hands over and starts the wall timers.
struct AnswerDeadlines {
    struct Deadline {
        let corr: String
        let milliseconds: Int64
        let action: () -> Void
        /// Set once the request is sequenced.
        var seq: UInt64?
        /// The plugin it went to; nil: nobody holds the role, the deadline starts at once.
        var answerer: String?
        /// Delivered to the answerer's process (its turn may still be to come).
        var delivered = false
    }

    private var waiting: [Deadline] = []

    var isEmpty: Bool { waiting.isEmpty }

    /// A deadline for the request `corr`, about to be emitted.
    mutating func add(corr: String, milliseconds: Int64, action: @escaping () -> Void) {
        waiting.append(Deadline(corr: corr, milliseconds: milliseconds, action: action))
    }

    /// Stops waiting for `corr` (answered, or the OS gave up on it); whether it was still waiting.
    mutating func remove(corr: String) -> Bool {
        guard let index = waiting.firstIndex(where: { $0.corr == corr }) else { return false }
        waiting.remove(at: index)
        return true
    }

    /// The request `corr` was sequenced as `seq` and goes to `answerer`; returns its deadline when it starts now
    /// (no answerer).
    mutating func sequenced(corr: String, seq: UInt64, answerer: String?) -> Deadline? {
        guard let index = waiting.firstIndex(where: { $0.corr == corr && $0.seq == nil }) else { return nil }
        waiting[index].seq = seq
        waiting[index].answerer = answerer
        return answerer == nil ? waiting.remove(at: index) : nil
    }

    /// `seq` was delivered to `plugin`'s process.
    mutating func delivered(seq: UInt64, to plugin: String) {
        for index in waiting.indices where waiting[index].seq == seq && waiting[index].answerer == plugin { waiting[index].delivered = true }
    }

    /// The deadlines that start now that `plugin` has its turn: those of the requests delivered to it.
    mutating func start(heldBy plugin: String) -> [Deadline] {
        take { $0.delivered && $0.answerer == plugin }
    }

    /// The deadlines of requests that went to a plugin that will not come back to take them — delivered to a process
    /// that ended before its turn, or waiting in its mailbox — start now.
    mutating func start(unreachable isReachable: (String) -> Bool) -> [Deadline] {
        take { deadline in deadline.seq != nil && deadline.answerer.map { !isReachable($0) } ?? true }
    }

    private mutating func take(_ matching: (Deadline) -> Bool) -> [Deadline] {
        let taken = waiting.filter(matching)
        if !taken.isEmpty { waiting.removeAll(where: matching) }
        return taken
    }
}
