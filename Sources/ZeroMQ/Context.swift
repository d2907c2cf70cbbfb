import CZeroMQ

/// A libzmq context: owns the I/O threads that every socket made from it uses.
///
/// Sockets keep their context alive; the context is terminated when the last reference goes,
/// which waits for every socket's linger period — so sockets close with a bounded linger (see `Socket`).
public final class Context: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer

    /// Creates a context with the given number of I/O threads, for at most `maximumSockets` sockets (libzmq's default
    /// is 1023).
    public init(ioThreads: Int32 = 1, maximumSockets: Int32? = nil) throws {
        guard let handle = zmq_ctx_new() else { throw ZMQError.last("zmq_ctx_new") }
        self.handle = handle
        if zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads) != 0 {
            zmq_ctx_term(handle)
            throw ZMQError.last("zmq_ctx_set(ZMQ_IO_THREADS)")
        }
        if let maximumSockets, zmq_ctx_set(handle, ZMQ_MAX_SOCKETS, maximumSockets) != 0 {
            zmq_ctx_term(handle)
            throw ZMQError.last("zmq_ctx_set(ZMQ_MAX_SOCKETS)")
        }
    }

    /// Sets up, once per process, what libzmq's libraries (libsodium, OpenPGM) otherwise set up at the process's first
    /// context, and holds it set up for the process's life. A plugin's launch template (`LaunchTemplateWarmUp`) makes
    /// it before it forks: it leaves no descriptor open (OpenPGM reads the protocols database and closes it; libsodium
    /// draws from `getrandom` at each use, keeping no generator's state), starts no thread, and what it reads of the
    /// environment (`PGM_*`) is the plugin's, as in each launch. What its launches then share is libsodium's canary of
    /// guarded allocations, as they share the template's stack-protector guard and address-space layout.
    public static func setUpLibraries() { shieldbus_zmq_libraries_set_up() }

    /// Whether `setUpLibraries` (or a first context) has been made in this process; nil when this libzmq cannot tell
    /// (built without OpenPGM).
    public static var librariesAreSetUp: Bool? {
        switch shieldbus_zmq_libraries_are_set_up() {
        case 1: return true
        case 0: return false
        default: return nil
        }
    }

    /// Makes every blocking call on this context's sockets return with ETERM (for orderly shutdown from another thread).
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    deinit {
        _ = retryingOnInterrupt { zmq_ctx_term(handle) }
    }
}
