import BusProtocol

/// One connected client as the broker sees it: who it is, what it subscribed to, and its delivery accounting.
final class Session {
    let identity: [UInt8]
    let name: String
    let role: Role
    let subscriptions: [String]
    /// Topic prefixes it only observes: in virtual time handed over without a turn (docs/protocol.md, `observe`).
    let observations: [String]
    /// The App-Group keys whose changes its `state.changed` subscription delivers (`watch`); nil: every change.
    let watch: StateWatch?
    let pid: Int64?
    /// Whether it reads several events in one message (`batches` in its hello).
    let readsBatches: Bool
    /// The dispatcher's scratch while it sends a batch: which of the batch's deliveries are this session's.
    var batchItems: [Int] = []
    /// Set when the session ends (bye, timeout, replaced by a new hello): what was about to be sent to it is not.
    var hasEnded = false
    private(set) var acknowledges: Bool
    let connectedAt: Int64
    var lastHeard: Int64
    /// A supervised plugin's process: what it is given is kept in the delivery ledger until it acknowledges it.
    var isDurable = false
    /// A returning plugin that has not yet had what it missed: new events for it wait behind that, in the ledger.
    var isCatchingUp = false

    /// The last delivery number used for this receiver (its own counter, gap-free unless deliveries were lost).
    var lastDelivery: UInt64 = 0
    /// Deliveries actually queued to the receiver.
    var delivered: UInt64 = 0
    /// Deliveries lost because the receiver's queue was full or it was unreachable.
    var dropped: UInt64 = 0
    /// The first lost delivery (and its seq) of a run of losses not yet reported.
    var dropRunStart: (delivery: UInt64, seq: UInt64)?
    /// Gaps the receiver itself reported.
    var gapsReported: UInt64 = 0
    /// Malformed or refused messages from this client.
    var errors: UInt64 = 0
    var lastError: String?
    /// Sequence numbers delivered and not yet acknowledged, oldest first.
    private var unacknowledged: [UInt64] = []
    private var unacknowledgedHead = 0
    private(set) var acknowledgedSeq: UInt64 = 0

    init(identity: [UInt8], hello: Hello, now: Int64) {
        self.identity = identity
        self.name = hello.name
        self.role = hello.role
        self.subscriptions = hello.subscriptions
        self.observations = hello.observations
        self.watch = hello.watch
        self.pid = hello.pid
        self.readsBatches = hello.readsBatches
        self.acknowledges = hello.acknowledges && hello.role != .tap  // a tap only reads: nothing waits for it
        self.connectedAt = now
        self.lastHeard = now
        openingHello = hello.opening
        subscriptionIndex = hello.subscriptions.count > Self.subscriptionsScannedInTurn ? PrefixIndex(hello.subscriptions) : nil
    }

    /// Up to this many subscriptions are compared one by one; more are looked up by the topic's own prefixes, so an
    /// event costs a session at most one lookup per distinct prefix length, however many prefixes it holds.
    static let subscriptionsScannedInTurn = 8
    private let subscriptionIndex: PrefixIndex?
    /// The index's answers by topic (its subscriptions are fixed at hello): one lookup of the topic instead of one
    /// per distinct prefix length at every event.
    private var indexAnswers: [String: Bool] = [:]

    /// Whether this session should receive an event on `topic`.
    @inline(__always)
    func wants(_ topic: String) -> Bool {
        if let subscriptionIndex {
            if let found = indexAnswers[topic] { return found }
            let found = subscriptionIndex.matches(topic)
            // A bus has few topics, but a client may make up any number of them: bounded all the same.
            if indexAnswers.count >= 64 { indexAnswers.removeAll() }
            indexAnswers[topic] = found
            return found
        }
        for prefix in subscriptions where Topic.matches(topic, prefix: prefix) { return true }
        return false
    }

    /// Whether this session should receive `event`: its topic subscribed to and, for a change of an App-Group key,
    /// the key watched. `changed` reads the change's group and key, once per event, only if some receiver watches keys.
    @inline(__always)
    func wants(_ event: PendingEvent, changed: inout ChangedKeyReading) -> Bool {
        wants(event.topic) && changed.admits(event, watch: watch)
    }

    /// Whether it only observes events on `topic`.
    func observes(_ topic: String) -> Bool {
        observations.contains { Topic.matches(topic, prefix: $0) }
    }

    var isObserver: Bool { !observations.isEmpty }

    /// A tap or a tool: it watches or drives the bus and is no plugin, so nothing waits for it and its comings and
    /// goings are not announced.
    var isTapOrTool: Bool { role == .tap || role == .tool }

    /// Whether it may publish the person's input (`input.*`): a tool admitted by the tool credential, or a plugin
    /// whose configuration says `personInput: true`.
    var actsForPerson = false
    /// The hello that opened it: the same again, queued behind it, opens nothing new (`Reception.welcome`).
    let openingHello: Hello
    /// Whether it is a configured plugin's process (admitted by its launch credential).
    var isSupervised = false

    /// The last event handed to it to observe, without a turn.
    var lastObservedSeq: UInt64 = 0

    /// Whether something it was handed to observe is not acknowledged yet. Only those: a returning plugin
    /// acknowledges what it missed only after its own `bus.ready`, its turn.
    var isStillObserving: Bool {
        lastObservedSeq > 0 && unacknowledged[unacknowledgedHead...].contains { $0 <= lastObservedSeq }
    }

    func recordDelivered(seq: UInt64, isReply: Bool = false) {
        delivered += 1
        if acknowledges && !isReply { unacknowledged.append(seq) }
    }

    func acknowledge(upTo seq: UInt64) {
        acknowledgedSeq = max(acknowledgedSeq, seq)
        while unacknowledgedHead < unacknowledged.count, unacknowledged[unacknowledgedHead] <= seq {
            unacknowledgedHead += 1
        }
        // In virtual time a reply can overtake older events still waiting for their turn: they are covered too.
        if unacknowledged[unacknowledgedHead...].contains(where: { $0 <= seq }) {
            unacknowledged = unacknowledged[unacknowledgedHead...].filter { $0 > seq }
            unacknowledgedHead = 0
        }
        if unacknowledgedHead > 1024, unacknowledgedHead * 2 > unacknowledged.count {
            unacknowledged.removeFirst(unacknowledgedHead)
            unacknowledgedHead = 0
        }
    }

    /// Stops waiting for this session's acknowledgements (it stopped sending them).
    func excuseFromAcknowledging() {
        acknowledges = false
        unacknowledged.removeAll()
        unacknowledgedHead = 0
    }

    /// When its last `resume` hello was welcomed (monotonic ms), if ever.
    var lastResumedAt: Int64?

    /// Events delivered but not yet acknowledged.
    var lag: Int { unacknowledged.count - unacknowledgedHead }

    /// A name for messages about this session.
    var label: String { "\(name) (\(role.rawValue))" }
}

/// Hex form of a ROUTER identity, to name a sender that has not said hello.
func hexIdentity(_ identity: [UInt8]) -> String {
    "peer-" + identity.map { byte in
        let hex = String(byte, radix: 16)
        return byte < 16 ? "0" + hex : hex
    }.joined()
}

/// A set of topic prefixes, looked up by the prefixes of a topic: one hash lookup per distinct prefix length.
struct PrefixIndex {
    private let prefixes: Set<Substring>
    /// The distinct lengths (UTF-8 bytes) of the prefixes, shortest first.
    private let lengths: [Int]

    init(_ prefixes: [String]) {
        self.prefixes = Set(prefixes.map { Substring($0) })
        lengths = Set(prefixes.map(\.utf8.count)).sorted()
    }

    func matches(_ topic: String) -> Bool {
        let utf8 = topic.utf8
        for length in lengths {
            guard length <= utf8.count else { return false }
            if prefixes.contains(Substring(utf8.prefix(length))) { return true }
        }
        return false
    }
}

/// The group and key of the `state.changed` event being routed, read from its body at most once — and only when a
/// receiver watches keys, so that routing a change to receivers that watch none parses nothing.
struct ChangedKeyReading {
    private var isRead = false
    private var changed: ChangedKey?

    /// Whether a receiver subscribed to `event`'s topic that watches `watch` gets it: every event when it watches
    /// nothing in particular (nil), else every event but a change of a key it does not watch.
    @inline(__always)
    mutating func admits(_ event: PendingEvent, watch: StateWatch?) -> Bool {
        guard let watch, event.topic == StateWatch.topic else { return true }
        if !isRead { (changed, isRead) = (ChangedKey(body: event.body), true) }
        return watch.covers(changed)
    }
}
