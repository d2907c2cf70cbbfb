import BusProtocol
import ZeroMQ

/// Why a client could not talk to the broker.
public enum BusClientError: Error, CustomStringConvertible {
    /// No broker is running on this runtime directory (neither its bus socket nor its endpoint file exists).
    case noBroker(runtimeDirectory: String)
    /// No broker answered within the time allowed.
    case brokerNotAnswering(endpoint: String, waitedMilliseconds: Int)
    /// The broker refused the hello or a message.
    case refused(ErrorReport)
    /// The broker sent something this client cannot read.
    case protocolViolation(BusProtocolError)
    /// The broker said goodbye.
    case brokerLeft(reason: String)
    /// The connection was cut from another thread (`BusConnection.cut`: a plugin hosted in a test's process was
    /// killed) while it waited for the broker.
    case cut(endpoint: String)
    /// The process was asked to stop (its `connect` caller's stop request, e.g. SIGTERM) before the broker welcomed it.
    case stoppedBeforeWelcome(endpoint: String)
    case transport(ZMQError)
    /// The bus socket or a key file exists but this user may not use it (another user's broker).
    case permissionDenied(path: String)
    /// A tcp endpoint, and the CURVE keys to reach it could not be read.
    case curveKeys(CurveCertificate.ReadError)

    public var description: String {
        switch self {
        case let .noBroker(directory):
            return "no broker is running on \(directory) (no bus socket or endpoint file there) — start one with `shieldbus run`, or name another runtime directory (--runtime-dir or SHIELDBUS_RUNTIME_DIR)"
        case let .brokerNotAnswering(endpoint, waited):
            return "no broker answered at \(endpoint) within \(waited) ms — is `shieldbus run` running on this runtime directory? (--runtime-dir or SHIELDBUS_RUNTIME_DIR)"
        case let .refused(report):
            return "the broker refused: \(report.message) [\(report.code)]"
        case let .protocolViolation(error):
            return "the broker sent a message this client cannot read: \(error)"
        case let .brokerLeft(reason):
            return "the broker left: \(reason)"
        case let .cut(endpoint):
            return "the connection to \(endpoint) was cut (the plugin was killed): nothing more reaches the broker"
        case let .stoppedBeforeWelcome(endpoint):
            return "asked to stop while waiting for the broker at \(endpoint) to welcome this client"
        case let .transport(error):
            return "bus transport error: \(error)"
        case let .permissionDenied(path):
            return "permission denied: \(path) belongs to a broker this user may not use"
        case let .curveKeys(error):
            return "cannot reach a tcp broker without its CURVE keys: \(error)"
        }
    }
}
