import CZeroMQ

/// The libzmq socket types this project uses.
public enum SocketType: Sendable, CustomStringConvertible {
    case pair, pub, sub, xpub, xsub, dealer, router, push, pull, req, rep

    var rawValue: Int32 {
        switch self {
        case .pair: return ZMQ_PAIR
        case .pub: return ZMQ_PUB
        case .sub: return ZMQ_SUB
        case .xpub: return ZMQ_XPUB
        case .xsub: return ZMQ_XSUB
        case .dealer: return ZMQ_DEALER
        case .router: return ZMQ_ROUTER
        case .push: return ZMQ_PUSH
        case .pull: return ZMQ_PULL
        case .req: return ZMQ_REQ
        case .rep: return ZMQ_REP
        }
    }

    public var description: String {
        switch self {
        case .pair: return "PAIR"
        case .pub: return "PUB"
        case .sub: return "SUB"
        case .xpub: return "XPUB"
        case .xsub: return "XSUB"
        case .dealer: return "DEALER"
        case .router: return "ROUTER"
        case .push: return "PUSH"
        case .pull: return "PULL"
        case .req: return "REQ"
        case .rep: return "REP"
        }
    }
}
