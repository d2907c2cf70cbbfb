import Foundation
import ZeroMQ

/// A CURVE key pair (or only its public half) in a certificate file, the format pyzmq's `zmq.auth` reads and
/// writes (`NAME.key` public, `NAME.key_secret` secret), so a Python plugin can load it with `zmq.auth.load_certificate`.
public struct CurveCertificate: Equatable, Sendable {
    public let publicKey: String
    /// Only in a secret certificate.
    public let secretKey: String?

    public init(publicKey: String, secretKey: String? = nil) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    public init(_ keys: CurveKeyPair) {
        self.init(publicKey: keys.publicKey, secretKey: keys.secretKey)
    }

    /// Why a certificate could not be read.
    public enum ReadError: Error, Equatable, CustomStringConvertible {
        case permissionDenied(path: String)
        case unreadable(path: String, reason: String)
        case malformed(path: String, reason: String)

        public var description: String {
            switch self {
            case .permissionDenied(let path): return "permission denied reading the CURVE certificate \(path)"
            case let .unreadable(path, reason): return "cannot read the CURVE certificate \(path): \(reason)"
            case let .malformed(path, reason): return "\(path) is not a CURVE certificate: \(reason)"
            }
        }
    }

    /// Reads a certificate; with `needSecret`, a public-only one is refused.
    public static func read(path: String, needSecret: Bool = false) throws -> CurveCertificate {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as CocoaError where error.code == .fileReadNoPermission {
            throw ReadError.permissionDenied(path: path)
        } catch {
            throw ReadError.unreadable(path: path, reason: (error as? CocoaError)?.code == .fileReadNoSuchFile ? "no such file" : "\(error)")
        }
        guard data.count < 64 * 1024 else { throw ReadError.malformed(path: path, reason: "it is larger than 64 KiB") }
        return try parse(String(decoding: data, as: UTF8.self), path: path, needSecret: needSecret)
    }

    /// Parses certificate text: `public-key = "…"` and `secret-key = "…"` lines (Z85), `#` comments.
    public static func parse(_ text: String, path: String, needSecret: Bool = false) throws -> CurveCertificate {
        var keys: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            let name = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t\"'"))
            if name == "public-key" || name == "secret-key" { keys[name] = value }
        }
        guard let publicKey = keys["public-key"] else { throw ReadError.malformed(path: path, reason: "no public-key line") }
        guard Curve.isTextKey(publicKey) else { throw ReadError.malformed(path: path, reason: "its public-key is not 40 characters of Z85") }
        guard let secretKey = keys["secret-key"] else {
            if needSecret { throw ReadError.malformed(path: path, reason: "it holds no secret-key (give the NAME.key_secret file, not NAME.key)") }
            return CurveCertificate(publicKey: publicKey)
        }
        guard let pair = CurveKeyPair(secretKey: secretKey), pair.publicKey == publicKey else {
            throw ReadError.malformed(path: path, reason: "its secret-key is not the pair of its public-key")
        }
        return CurveCertificate(pair)
    }

    /// The key pair, when this certificate holds the secret half.
    public var keyPair: CurveKeyPair? { secretKey.flatMap(CurveKeyPair.init(secretKey:)) }

    /// The file text: the public certificate, or with `includingSecret` the secret one.
    public func text(includingSecret: Bool) -> String {
        var lines = [
            includingSecret
                ? "#   ShieldBus CURVE secret certificate: keep it private (mode 0600), never put it in an allowlist"
                : "#   ShieldBus CURVE public certificate: name it in a broker's bus.curve.allow to admit its holder",
            "metadata", "curve", "    public-key = \"\(publicKey)\"",
        ]
        if includingSecret, let secretKey { lines.append("    secret-key = \"\(secretKey)\"") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes the public certificate to `NAME.key` and, if held, the secret one to `NAME.key_secret` (0600).
    public func write(directory: String, name: String) throws -> (publicPath: String, secretPath: String?) {
        let publicPath = "\(directory)/\(name).key"
        try PrivateFile.write(text(includingSecret: false), to: publicPath, mode: 0o644)
        guard secretKey != nil else { return (publicPath, nil) }
        let secretPath = "\(directory)/\(name).key_secret"
        try PrivateFile.write(text(includingSecret: true), to: secretPath, mode: 0o600)
        return (publicPath, secretPath)
    }
}

/// The keys a client needs to reach a broker on tcp: the broker's public key and the client's own pair.
public struct CurveClientKeys: Equatable, Sendable {
    public let serverKey: String
    public let keys: CurveKeyPair

    public init(serverKey: String, keys: CurveKeyPair) {
        self.serverKey = serverKey
        self.keys = keys
    }

    /// The broker's public certificate in the runtime directory, and the client's secret certificate:
    /// `SHIELDBUS_CLIENT_KEY` (a key made with `shieldbus keys new` and on the broker's allowlist), else the
    /// local key the broker wrote for its own plugins and its user's tools.
    public static func discover(runtime: RuntimeDirectory, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> CurveClientKeys {
        let server = try CurveCertificate.read(path: runtime.serverCertificatePath)
        let clientPath = environment["SHIELDBUS_CLIENT_KEY"].flatMap { $0.isEmpty ? nil : $0 } ?? runtime.localClientCertificatePath
        let client = try CurveCertificate.read(path: clientPath, needSecret: true)
        guard let pair = client.keyPair else { throw CurveCertificate.ReadError.malformed(path: clientPath, reason: "no secret-key") }
        return CurveClientKeys(serverKey: server.publicKey, keys: pair)
    }
}

/// A file that could not be written.
public struct PrivateFileError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot write \(path): \(reason)" }
}

/// Writing files only their owner may read, whatever the umask.
public enum PrivateFile {
    /// Writes `text` to `path` (replacing it) with `mode`, refusing to follow a symbolic link planted there.
    public static func write(_ text: String, to path: String, mode: mode_t = 0o600) throws {
        try write(bytes: Array(text.utf8), to: path, mode: mode)
    }

    /// Writes `bytes` to `path` as `write(_:to:mode:)` writes text.
    public static func write(bytes: [UInt8], to path: String, mode: mode_t = 0o600) throws {
        unlink(path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw PrivateFileError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        fchmod(descriptor, mode)  // the umask may have taken bits away; never adds any beyond `mode`
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw PrivateFileError(path: path, reason: String(cString: strerror(errno))) }
            written += count
        }
    }
}
