// SessionTable: the connected sessions — by identity, by name, in name order — and the subscriptions of plugins away.

import BusProtocol

/// Every connected session, found without scanning: thousands of idle sessions must not make each message cost
/// thousands of steps. Names are unique among sessions. Also what each supervised plugin subscribed to in its last
/// session, so that its mailbox fills while it is between two processes.
final class SessionTable {
    /// In the order they connected.
    private(set) var all: [Session] = []
    /// In name order, the order of turns in virtual time: kept so as sessions come and go, so that no event sorts its
    /// receivers (by comparing strings).
    private(set) var inNameOrder: [Session] = []
    private var byIdentity: [[UInt8]: Session] = [:]
    private var byName: [String: Session] = [:] {
        didSet {
            absentFound = nil
            nameChanges &+= 1
        }
    }
    /// Changes of which names have a session so far: an answer found from `named` holds while it stays the same.
    private(set) var nameChanges: UInt64 = 0
    /// Connections whose session ended: what they still send is their leftovers, not news.
    private var endedIdentities = Set<[UInt8]>()
    /// The subscriptions each supervised plugin had in its last session.
    private var lastSubscriptions: [String: LastSubscription] = [:] {
        didSet {
            absentFound = nil
            subscribersFound.removeAll()
        }
    }
    /// The plugins in `lastSubscriptions` without a session, found again only when a session or a subscription comes
    /// or goes: every event looks at them, and usually there are none.
    private var absentFound: [String]?
    /// By topic, `mayHaveSubscribers`' answer, found again only when a session or a plugin's last subscriptions come
    /// or go: the clock asks about its tick at every bus minute, usually of a bus where nobody wants it.
    private var subscribersFound: [String: Bool] = [:]
    /// By topic, the sessions subscribed to it, found again only when a session comes or goes (a session's
    /// subscriptions are fixed at hello): every event is routed, and without it each would be compared with every
    /// session's prefixes.
    private var sessionsByTopic: [String: Subscribers] = [:]

    /// The sessions subscribed to a topic, in the order they connected and in name order.
    private struct Subscribers {
        var all: [Session]
        var inNameOrder: [Session]
    }

    var isEmpty: Bool { all.isEmpty }

    /// How many sessions ended since the broker started.
    private(set) var endedCount: UInt64 = 0

    subscript(identity identity: [UInt8]) -> Session? { byIdentity[identity] }

    func named(_ name: String) -> Session? { byName[name] }

    /// Whether `session` is still the one its connection has (not ended, not replaced).
    func isCurrent(_ session: Session) -> Bool { byIdentity[session.identity] === session }

    func add(_ session: Session) {
        all.append(session)
        inNameOrder.insert(session, at: inNameOrder.firstIndex { $0.name > session.name } ?? inNameOrder.count)
        byIdentity[session.identity] = session
        byName[session.name] = session
        subscribersFound.removeAll()
        sessionsByTopic.removeAll()
    }

    /// Takes `session` out; what its connection sends from now on is leftovers.
    func remove(_ session: Session) {
        all.removeAll { $0 === session }
        inNameOrder.removeAll { $0 === session }
        byIdentity[session.identity] = nil
        session.hasEnded = true
        endedCount += 1
        if byName[session.name] === session { byName[session.name] = nil }
        endedIdentities.insert(session.identity)
        if endedIdentities.count > 1024 { endedIdentities = [session.identity] }
        subscribersFound.removeAll()
        sessionsByTopic.removeAll()
    }

    /// The sessions whose subscriptions select `topic` (`Session.wants(_:)`, by topic alone: a `watch` is judged by
    /// the event's body), in the order they connected, or in name order.
    func subscribers(of topic: String, inNameOrder: Bool) -> [Session] {
        let found: Subscribers
        if let known = sessionsByTopic[topic] {
            found = known
        } else {
            found = Subscribers(all: all.filter { $0.wants(topic) }, inNameOrder: self.inNameOrder.filter { $0.wants(topic) })
            // A bus has few topics, but a client may make up any number of them: past the bound a topic is found
            // afresh each time, and the topics already kept stay kept.
            if sessionsByTopic.count < 256 { sessionsByTopic[topic] = found }
        }
        return inNameOrder ? found.inNameOrder : found.all
    }

    /// Whether `identity` is a connection whose session ended.
    func hasEnded(_ identity: [UInt8]) -> Bool { endedIdentities.contains(identity) }

    /// A supervised plugin said hello: its mailbox fills by its subscriptions while it is away.
    func noteSubscriptions(of hello: Hello) {
        lastSubscriptions[hello.name] = LastSubscription(prefixes: hello.subscriptions, watch: hello.watch)
    }

    /// What a supervised plugin subscribed to in its last session; nil for others.
    func lastSubscriptions(of name: String) -> LastSubscription? { lastSubscriptions[name] }

    /// Whether a session other than a tap's or a tool's, or a supervised plugin's last session, subscribes to `topic`:
    /// false means no plugin receives it now nor when it comes back. By topic alone: a `state.changed` that only
    /// sessions watching other keys subscribe to may have subscribers (a `watch` is judged by the event's body).
    func mayHaveSubscribers(_ topic: String) -> Bool {
        if let found = subscribersFound[topic] { return found }
        let found = all.contains { !$0.isTapOrTool && $0.wants(topic) }
            || lastSubscriptions.values.contains { $0.wants(topic) }
        // Asked of a few topics; bounded all the same.
        if subscribersFound.count >= 64 { subscribersFound.removeAll() }
        subscribersFound[topic] = found
        return found
    }

    /// The supervised plugins without a session now.
    var absentPlugins: [String] {
        if let found = absentFound { return found }
        let found = lastSubscriptions.keys.filter { byName[$0] == nil }
        absentFound = found
        return found
    }
}

/// What a supervised plugin subscribed to in its last session: its topic prefixes, and the App-Group keys it watched.
struct LastSubscription {
    let prefixes: [String]
    let watch: StateWatch?

    /// Whether it subscribed to `topic` (whatever keys it watched).
    func wants(_ topic: String) -> Bool {
        prefixes.contains { Topic.matches(topic, prefix: $0) }
    }

    /// Whether it gets `event`: its topic subscribed to and, for a change of an App-Group key, the key watched.
    func wants(_ event: PendingEvent, changed: inout ChangedKeyReading) -> Bool {
        wants(event.topic) && changed.admits(event, watch: watch)
    }
}
