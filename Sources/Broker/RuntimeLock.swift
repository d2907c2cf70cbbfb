import BusClient
import Foundation
import ZeroMQ

/// Why the broker could not take its runtime directory.
public enum RuntimeDirectoryError: Error, CustomStringConvertible {
    case cannotCreate(path: String, reason: String)
    case brokerAlreadyRunning(path: String, pid: String?)
    case socketPathTooLong(path: String, limit: Int)
    /// Another broker holds the state folder (two brokers never share one).
    case stateDirectoryInUse(path: String, pid: String?)
    case cannotLockState(path: String, reason: String)

    public var description: String {
        switch self {
        case let .cannotCreate(path, reason):
            return "cannot create the runtime directory \(path): \(reason)"
        case let .brokerAlreadyRunning(path, pid):
            let who = pid.map { "pid \($0)" } ?? "another process"
            return "a broker is already running on \(path) (\(who)); stop it, or choose another --runtime-dir"
        case let .stateDirectoryInUse(path, pid):
            let who = pid.map { "pid \($0)" } ?? "another process"
            return "the state folder \(path) is in use by another broker (\(who)); nothing was changed. Stop that broker, or choose another --state-dir"
        case let .cannotLockState(path, reason):
            return "cannot lock the state folder \(path): \(reason)"
        case let .socketPathTooLong(path, limit):
            return "the socket path \(path) is longer than the \(limit) bytes a Unix socket allows; choose a shorter --runtime-dir"
        }
    }
}

/// The broker's claim on its runtime directory: a private (0700) folder, an exclusive lock, a pid file,
/// and cleanup of a socket left behind by a broker that was killed.
///
/// The lock is an `flock` on `broker.lock`, so the kernel releases it when the holder dies — a stale socket
/// is one whose lock nobody holds.
public final class RuntimeLock {
    let directory: RuntimeDirectory
    private var lockDescriptor: Int32 = -1
    /// Set when a socket left by a killed broker was removed.
    private(set) var removedStaleSocket = false

    /// Takes the directory, or throws `brokerAlreadyRunning` having changed nothing in it.
    public init(_ directory: RuntimeDirectory) throws {
        self.directory = directory
        let path = directory.path
        try PrivateDirectory.claim(path, what: "runtime directory")
        let limit = 107
        if directory.busSocketPath.utf8.count > limit {
            throw RuntimeDirectoryError.socketPathTooLong(path: directory.busSocketPath, limit: limit)
        }
        lockDescriptor = open(directory.lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockDescriptor >= 0 else {
            throw RuntimeDirectoryError.cannotCreate(path: directory.lockPath, reason: String(cString: strerror(errno)))
        }
        if flock(lockDescriptor, LOCK_EX | LOCK_NB) != 0 {
            let pid = try? String(contentsOfFile: directory.pidPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            close(lockDescriptor)
            lockDescriptor = -1
            throw RuntimeDirectoryError.brokerAlreadyRunning(path: path, pid: pid)
        }
        // We hold the lock, so any socket here belongs to a broker that died without cleaning up.
        if unlink(directory.busSocketPath) == 0 { removedStaleSocket = true }
        unlink(directory.endpointFilePath)
        unlink(directory.serverCertificatePath)
        unlink(directory.localClientCertificatePath)
        unlink(directory.journalPointerPath)  // an earlier broker's journal is not this one's
        PrivateDirectory.restrictFiles(in: path)  // what an earlier run left (logs) may have wider modes
        try? PrivateFile.write("\(getpid())\n", to: directory.pidPath)
    }

    /// Records the state folder, for tools that are not told it (`RuntimeDirectory.stateDirectory()`).
    public func publishStateDirectory(_ stateDirectory: String) throws {
        try PrivateFile.write(URL(fileURLWithPath: stateDirectory).standardizedFileURL.path + "\n", to: directory.stateDirectoryPointerPath)
    }

    /// Records where the journal is written (relative paths made absolute), for tools that read what came before them.
    public func publishJournal(_ journalPath: String) throws {
        try PrivateFile.write(URL(fileURLWithPath: journalPath).standardizedFileURL.path + "\n", to: directory.journalPointerPath)
    }

    /// Records the endpoint clients should use.
    func publishEndpoint(_ endpoint: String) throws {
        try PrivateFile.write(endpoint + "\n", to: directory.endpointFilePath)
    }

    /// Writes the broker's public certificate and the local clients' secret one, for the user's own clients on tcp.
    func publishCurveKeys(server: CurveKeyPair, localClient: CurveKeyPair) throws {
        try PrivateFile.write(CurveCertificate(publicKey: server.publicKey).text(includingSecret: false), to: directory.serverCertificatePath)
        try PrivateFile.write(CurveCertificate(localClient).text(includingSecret: true), to: directory.localClientCertificatePath)
    }

    /// Removes the socket, endpoint and pid files and releases the lock.
    func release() {
        guard lockDescriptor >= 0 else { return }
        unlink(directory.busSocketPath)
        unlink(directory.endpointFilePath)
        unlink(directory.pidPath)
        unlink(directory.serverCertificatePath)
        unlink(directory.localClientCertificatePath)
        unlink(directory.journalPointerPath)
        unlink(directory.lockPath)
        close(lockDescriptor)
        lockDescriptor = -1
    }

    deinit { release() }
}

/// The broker's claim on its state folder: an `flock` on `<state dir>/state.lock`, holding the broker's pid.
/// Taken before anything in the folder is read, created or wiped, so two brokers never share one — even
/// with different runtime directories.
public final class StateDirectoryLock {
    private var descriptor: Int32 = -1

    public init(_ path: String) throws {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw RuntimeDirectoryError.cannotLockState(path: path, reason: String(cString: strerror(errno)))
        }
        let lockPath = path + "/state.lock"
        descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw RuntimeDirectoryError.cannotLockState(path: path, reason: String(cString: strerror(errno))) }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let holder = try? String(contentsOfFile: lockPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            close(descriptor)
            descriptor = -1
            throw RuntimeDirectoryError.stateDirectoryInUse(path: path, pid: holder?.isEmpty == false ? holder : nil)
        }
        let pid = Array("\(getpid())\n".utf8)
        if ftruncate(descriptor, 0) == 0 { _ = pid.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }
}
