import CZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// libzmq's CURVE security mechanism (CurveZMQ: Curve25519 keys, encryption and authentication on tcp).
public enum Curve {
    /// Whether this libzmq was built with CURVE (libsodium); without it no CURVE option can be set.
    public static var isAvailable: Bool { zmq_has("curve") == 1 }

    /// The length of a key written in Z85 text (32 bytes → 40 characters).
    public static let textKeyLength = 40

    /// Whether `text` is a key in Z85 text: 40 characters of the Z85 alphabet.
    public static func isTextKey(_ text: String) -> Bool {
        text.utf8.count == textKeyLength && decode(text) != nil
    }

    /// The 32 raw bytes of a key written in Z85 text, or nil when it is not one.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.count == textKeyLength else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        let decoded = bytes.withUnsafeMutableBufferPointer { buffer in zmq_z85_decode(buffer.baseAddress, text) }
        return decoded == nil ? nil : bytes
    }

    /// A 32-byte key as Z85 text.
    public static func encode(_ key: [UInt8]) -> String? {
        guard key.count == 32 else { return nil }
        var text = [CChar](repeating: 0, count: textKeyLength + 1)
        let encoded = key.withUnsafeBufferPointer { zmq_z85_encode(&text, $0.baseAddress, 32) }
        return encoded == nil ? nil : String(cString: text)
    }
}

/// A Curve25519 key pair in Z85 text, as libzmq's `zmq_curve_keypair` makes them.
public struct CurveKeyPair: Equatable, Sendable {
    public let publicKey: String
    public let secretKey: String

    /// A fresh random key pair.
    public static func generate() throws -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: Curve.textKeyLength + 1)
        var secretKey = [CChar](repeating: 0, count: Curve.textKeyLength + 1)
        guard zmq_curve_keypair(&publicKey, &secretKey) == 0 else { throw ZMQError.last("zmq_curve_keypair") }
        return CurveKeyPair(publicKey: String(cString: publicKey), secretKey: String(cString: secretKey))
    }

    /// The pair of a secret key (its public key derived from it); nil when `secretKey` is not a Z85 key.
    public init?(secretKey: String) {
        guard Curve.isTextKey(secretKey) else { return nil }
        var publicKey = [CChar](repeating: 0, count: Curve.textKeyLength + 1)
        guard zmq_curve_public(&publicKey, secretKey) == 0 else { return nil }
        self.init(publicKey: String(cString: publicKey), secretKey: secretKey)
    }

    private init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }
}

extension Socket {
    /// Makes this socket a CURVE server: every peer must complete a CURVE handshake with this secret key
    /// (and pass the context's ZAP handler, if one is bound). Set before `bind`.
    public func makeCurveServer(_ keys: CurveKeyPair) throws {
        try setOption(ZMQ_CURVE_SERVER, 1, "ZMQ_CURVE_SERVER")
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: Array(keys.secretKey.utf8), "ZMQ_CURVE_SECRETKEY")
    }

    /// Makes this socket a CURVE client of the server whose public key is `serverKey`. Set before `connect`.
    public func makeCurveClient(serverKey: String, keys: CurveKeyPair) throws {
        try setOption(ZMQ_CURVE_SERVERKEY, bytes: Array(serverKey.utf8), "ZMQ_CURVE_SERVERKEY")
        try setOption(ZMQ_CURVE_PUBLICKEY, bytes: Array(keys.publicKey.utf8), "ZMQ_CURVE_PUBLICKEY")
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: Array(keys.secretKey.utf8), "ZMQ_CURVE_SECRETKEY")
    }

    /// The largest inbound frame libzmq accepts (ZMQ_MAXMSGSIZE, -1 for no limit): a peer announcing a larger
    /// one is disconnected before anything is allocated for it.
    public func setMaximumMessageSize(_ bytes: Int64) throws {
        var value = bytes
        let handle = try rawHandle
        guard zmq_setsockopt(handle, ZMQ_MAXMSGSIZE, &value, MemoryLayout<Int64>.size) == 0 else {
            throw ZMQError.last("setsockopt(ZMQ_MAXMSGSIZE)")
        }
    }
}
