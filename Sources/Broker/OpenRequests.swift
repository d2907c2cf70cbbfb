// OpenRequests: requests awaiting their replies — who asked, the reply's topic, and who alone may answer.

import BusProtocol

/// Every request sequenced with a correlation id stays open until its reply is sequenced: the reply goes back to the
/// connection that asked, and only the request's answerer may send it (`Authority`).
final class OpenRequests {
    /// Who may answer a request: the OS (the broker's services), the holder of a role (by name), or anyone
    /// (requests in a plugin's own namespace).
    enum Answerer: Equatable {
        case system
        case session(String)
        case nobody(Role)
        case anyone
    }

    struct Request {
        /// The connection that asked; nil: the OS.
        var requester: [UInt8]?
        var replyTopic: String
        var answerer: Answerer
    }

    private var byCorrelation: [String: Request] = [:]

    subscript(corr: String) -> Request? { byCorrelation[corr] }

    /// Who answers a request on `topic`: the holder of the role the OS addresses it to (`holder`), the OS for the
    /// device API, anyone for requests in a plugin's own namespace.
    static func answerer(ofRequest topic: String, holder: (Role) -> String?) -> Answerer {
        if let role = Topic.answeringRole(forRequest: topic) { return holder(role).map(Answerer.session) ?? .nobody(role) }
        if Topic.isAnsweredBySystem(topic) { return .system }
        return .anyone
    }

    /// Notes a sequenced event that opens a request or answers one. Returns who asked, for a reply; and for a
    /// request addressed to a role, who alone receives it ("" when nobody holds the role).
    func note(_ event: PendingEvent, holder: (Role) -> String?) -> (requester: [UInt8]?, addressee: String?) {
        guard let corr = event.corr else { return (nil, nil) }
        if event.topic.hasSuffix(Topic.requestSuffix), event.requester != nil || Topic.answeringRole(forRequest: event.topic) != nil {
            let answerer = Self.answerer(ofRequest: event.topic, holder: holder)
            byCorrelation[corr] = Request(requester: event.requester, replyTopic: Topic.reply(to: event.topic), answerer: answerer)
            switch answerer {
            case .session(let name): return (nil, name)
            case .nobody: return (nil, "")
            case .system, .anyone: return (nil, nil)
            }
        }
        if let request = byCorrelation[corr], request.replyTopic == event.topic {
            byCorrelation[corr] = nil
            return (request.requester, nil)
        }
        return (nil, nil)
    }

    /// Forgets the requests a connection made (its session ended: nobody waits for their replies).
    func forget(requester identity: [UInt8]) {
        byCorrelation = byCorrelation.filter { $0.value.requester != identity }
    }

    /// Forgets every request (a broker crash loses them).
    func removeAll() { byCorrelation = [:] }
}
