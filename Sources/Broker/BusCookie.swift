import BusClient
import Foundation

/// The credentials of outside clients: `<runtime dir>/cookie` (taps, plugins under development) and
/// `<runtime dir>/tool-credential` (the person's tools), random secrets in files only the broker's user can read
/// (0600), as X11 and Jupyter do. Valid ones left by an earlier broker are kept, so clients still connected can say
/// hello again after a broker restart.
enum BusCookie {
    /// The secret in `path`, created if it is missing or not private to this user.
    static func establish(at path: String) throws -> String {
        var info = stat()
        if lstat(path, &info) == 0 {
            let isPrivateFile = (info.st_mode & S_IFMT) == S_IFREG && info.st_uid == getuid() && info.st_mode & 0o077 == 0
            if isPrivateFile, let existing = try? String(contentsOfFile: path, encoding: .utf8), existing.utf8.count == 64,
               existing.utf8.allSatisfy(\.isHexDigit) {
                return existing
            }
            unlink(path)
        }
        let cookie = BusCredential.random()
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw RuntimeDirectoryError.cannotCreate(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        let bytes = Array(cookie.utf8)  // exactly what a client presents: no newline to strip
        guard fchmod(descriptor, 0o600) == 0, write(descriptor, bytes, bytes.count) == bytes.count else {
            let reason = String(cString: strerror(errno))
            unlink(path)
            throw RuntimeDirectoryError.cannotCreate(path: path, reason: reason)
        }
        return cookie
    }
}

private extension UInt8 {
    var isHexDigit: Bool { (0x30...0x39).contains(self) || (0x61...0x66).contains(self) }
}
