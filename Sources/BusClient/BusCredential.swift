import BusProtocol
import Foundation

/// The secrets that admit a client to the bus (docs/protocol.md § 4.1): a supervised plugin's per-launch
/// credential, handed only to the process the broker started (`SHIELDBUS_CREDENTIAL` in its environment); the
/// cookie for outside clients, a file in the runtime directory only its owner can read (as X11 and Jupyter do); and
/// the tool credential beside it, which admits the person's own tools (`shieldbus do`, the Studio) as `tool`.
public enum BusCredential {
    /// The environment variable that hands a supervised plugin its per-launch credential.
    public static let environmentKey = "SHIELDBUS_CREDENTIAL"

    /// A fresh secret: 32 random bytes (the system's cryptographic generator), as 64 hex digits.
    public static func random() -> String {
        // Eight bytes per draw: the generator asks the kernel (`getrandom`) at each one, and a byte per draw would
        // make a system call per byte of a credential, which every plugin launch draws. The digits go into one buffer,
        // not a string per byte.
        var generator = SystemRandomNumberGenerator()
        var text = [UInt8]()
        text.reserveCapacity(64)
        for _ in 0..<4 {
            let draw = generator.next()
            for index in 0..<8 {
                let byte = UInt8(truncatingIfNeeded: draw >> (8 * index))
                HexDigits.append(byte, to: &text)
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `presented` equals `expected`, in time that does not depend on where they differ.
    public static func matches(_ presented: String?, _ expected: String?) -> Bool {
        guard let presented, let expected else { return false }
        let a = Array(presented.utf8), b = Array(expected.utf8)
        guard a.count == b.count, !b.isEmpty else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// The credential a client of `endpoint` presents: its per-launch credential when the broker started it, else
    /// a file of the runtime directory — the ipc socket's folder, or the resolved one for tcp: the tool credential
    /// for a `tool` (`actsForPerson`), the cookie for anyone else.
    public static func forClient(endpoint: String, actsForPerson: Bool = false,
                                 environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let launch = environment[environmentKey], !launch.isEmpty { return launch }
        let runtime: RuntimeDirectory
        if endpoint.hasPrefix("ipc://"), !endpoint.hasPrefix("ipc://@") {
            runtime = RuntimeDirectory(path: (String(endpoint.dropFirst("ipc://".count)) as NSString).deletingLastPathComponent)
        } else {
            runtime = RuntimeDirectory.resolve(nil, environment: environment)
        }
        return actsForPerson ? runtime.toolCredential() ?? runtime.cookie() : runtime.cookie()
    }
}

extension RuntimeDirectory {
    /// The cookie for outside clients, written by the broker at start (mode 0600).
    public var cookiePath: String { path + "/cookie" }

    /// The cookie's contents, if this user can read it.
    public func cookie() -> String? { Self.secret(in: cookiePath) }

    /// The tool credential, written by the broker at start (mode 0600): what lets a client act as the person.
    public var toolCredentialPath: String { path + "/tool-credential" }

    /// The tool credential's contents, if this user can read it.
    public func toolCredential() -> String? { Self.secret(in: toolCredentialPath) }

    private static func secret(in path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }
}
