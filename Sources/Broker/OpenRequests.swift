// OpenRequests: requests awaiting their replies — who asked, the reply's topic, and who alone may answer.

import BusProtocol

/// Every request sequenced with a correlation id stays open until its reply is sequenced: the reply goes back to the
/// connection that asked, and only the request's answerer may send it (`Authority`). Correlation ids are each
/// requester's own: two clients may use the same one, unless their requests wait for the same reply topic (the reply
/// would not say whose it is). Nobody can make another client's ids unusable by claiming them first.
final class OpenRequests {
    /// Who may answer a request: the OS (the broker's services), the holder of a role (by name), the owner of the
    /// namespace the request is in (by name), or nobody (a role nobody holds).
    enum Answerer: Equatable {
        case system
        case session(String)
        case nobody(Role)
    }

    struct Request {
        /// The connection that asked; nil: the OS.
        var requester: [UInt8]?
        var replyTopic: String
        var answerer: Answerer
    }

    /// The most requests one session may have waiting: a client cannot grow the broker's memory without bound.
    static let perSessionLimit = 1_024

    /// Usually one request per id; several only from different requesters on different reply topics.
    private var byCorrelation: [String: [Request]] = [:]
    private var waitingPerRequester: [[UInt8]: Int] = [:]
    /// Declared namespaces → their owner, for requests in them (`x.<name>.` is `<name>`'s).
    private let declaredNamespaces: [String: String]
    /// Which requests the system routes to a role's holder.
    private let table: BusTable

    init(table: BusTable, declaredNamespaces: [String: String] = [:]) {
        self.table = table
        self.declaredNamespaces = declaredNamespaces
    }

    /// The waiting request a reply on `replyTopic` with `corr` answers.
    func waiting(corr: String, replyTopic: String) -> Request? {
        byCorrelation[corr]?.first { $0.replyTopic == replyTopic }
    }

    /// Why `requester` may not open a request with `corr` on `topic` now, if it may not.
    func problem(opening topic: String, corr: String, by requester: [UInt8]) -> BusProtocolError? {
        if let waiting = byCorrelation[corr] {
            let replyTopic = Topic.reply(to: topic)
            if waiting.contains(where: { $0.requester == requester || $0.replyTopic == replyTopic }) { return .duplicateCorrelation(corr) }
        }
        if waitingPerRequester[requester, default: 0] >= Self.perSessionLimit { return .tooManyRequests(limit: Self.perSessionLimit) }
        return nil
    }

    /// Who answers a request on `topic`: the holder of the role the OS addresses it to (`holder`), the OS for the
    /// device API, the owner of the namespace otherwise.
    func answerer(ofRequest topic: String, holder: (Role) -> String?) -> Answerer {
        if let role = table.answeringRole(forRequest: topic) { return holder(role).map(Answerer.session) ?? .nobody(role) }
        if table.isAnsweredBySystem(topic) { return .system }
        return Topic.owner(of: topic, declared: declaredNamespaces).map(Answerer.session) ?? .system
    }

    /// Notes a sequenced event that opens a request or answers one. Returns who asked, for a reply; and for a
    /// request addressed to a role, who alone receives it ("" when nobody holds the role).
    func note(_ event: PendingEvent, holder: (Role) -> String?) -> (requester: [UInt8]?, addressee: String?) {
        guard let corr = event.corr else { return (nil, nil) }
        if event.topic.hasSuffix(Topic.requestSuffix), event.requester != nil || table.answeringRole(forRequest: event.topic) != nil {
            let answerer = answerer(ofRequest: event.topic, holder: holder)
            byCorrelation[corr, default: []].append(Request(requester: event.requester, replyTopic: Topic.reply(to: event.topic), answerer: answerer))
            if let requester = event.requester { waitingPerRequester[requester, default: 0] += 1 }
            switch answerer {
            case .session(let name) where table.answeringRole(forRequest: event.topic) != nil: return (nil, name)
            case .nobody: return (nil, "")
            case .session, .system: return (nil, nil)
            }
        }
        if var waiting = byCorrelation[corr], let index = waiting.firstIndex(where: { $0.replyTopic == event.topic }) {
            let request = waiting.remove(at: index)
            byCorrelation[corr] = waiting.isEmpty ? nil : waiting
            if let requester = request.requester { release(requester) }
            return (request.requester, nil)
        }
        return (nil, nil)
    }

    /// Forgets the requests a connection made (its session ended: nobody waits for their replies).
    func forget(requester identity: [UInt8]) {
        guard waitingPerRequester.removeValue(forKey: identity) != nil else { return }
        byCorrelation = byCorrelation.compactMapValues { waiting in
            let kept = waiting.filter { $0.requester != identity }
            return kept.isEmpty ? nil : kept
        }
    }

    /// Forgets every request (a broker crash loses them).
    func removeAll() {
        byCorrelation = [:]
        waitingPerRequester = [:]
    }

    private func release(_ requester: [UInt8]) {
        let left = waitingPerRequester[requester, default: 1] - 1
        waitingPerRequester[requester] = left > 0 ? left : nil
    }
}
