import Foundation

/// Why an endpoint cannot carry the bus.
public enum BusEndpointError: Error, Equatable, CustomStringConvertible {
    /// `ipc://@name`: a Linux abstract socket has no file, so no file permissions keep other users out.
    case abstractSocket(String)
    /// A tcp address other than the loopback interface.
    case notLocal(String)
    /// Neither `ipc://` nor `tcp://`.
    case unsupportedTransport(String)

    public var description: String {
        switch self {
        case .abstractSocket(let endpoint):
            return "\(endpoint) is an abstract Unix socket: it has no file permissions, so any local user could connect; use ipc://<path> (the default, in the private runtime directory) or tcp://127.0.0.1:PORT (which requires CURVE)"
        case .notLocal(let endpoint):
            return "\(endpoint) is not on this machine; the bus listens only on ipc://<path> or tcp://127.0.0.1:PORT (also localhost, [::1])"
        case .unsupportedTransport(let endpoint):
            return "\(endpoint) is neither ipc:// nor tcp://; the bus listens only on ipc://<path> or tcp://127.0.0.1:PORT"
        }
    }
}

/// A bus endpoint the broker may listen on: a Unix socket file, or tcp on the loopback interface (always with CURVE).
public enum BusEndpoint: Equatable, Sendable {
    case ipc(path: String)
    case tcp(String)

    /// Checks `endpoint`: abstract sockets and addresses off this machine are refused.
    public init(_ endpoint: String) throws {
        if endpoint.hasPrefix("ipc://") {
            let path = String(endpoint.dropFirst("ipc://".count))
            guard !path.hasPrefix("@"), !path.isEmpty else { throw BusEndpointError.abstractSocket(endpoint) }
            self = .ipc(path: path)
        } else if endpoint.hasPrefix("tcp://") {
            let local = ["tcp://127.", "tcp://localhost:", "tcp://[::1]:"]
            guard local.contains(where: endpoint.hasPrefix) else { throw BusEndpointError.notLocal(endpoint) }
            self = .tcp(endpoint)
        } else {
            throw BusEndpointError.unsupportedTransport(endpoint)
        }
    }

    /// Whether peers must authenticate with CURVE (tcp has no file permissions to rely on).
    public var needsCurve: Bool {
        if case .tcp = self { return true }
        return false
    }
}
