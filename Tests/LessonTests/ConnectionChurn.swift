import BusProtocol
import Foundation
import ZeroMQ

/// Outside clients connecting, saying hello and leaving in a loop, on `threads` threads of their own, each in rounds
/// of `clients` connections at once, for as long as it is switched on: the churn of issue #27, beside a running device.
final class ConnectionChurn: @unchecked Sendable {
    private let lock = NSLock()
    private var on = false, stopping = false, failure: Error?
    private var hellos = 0, welcomes = 0
    private let done = DispatchSemaphore(value: 0)
    private let threads: Int

    init(endpoint: String, cookie: String, threads: Int = 4, clients: Int = 50) throws {
        self.threads = threads
        let context = try Context(ioThreads: 1, maximumSockets: 4_096)
        for index in 0..<threads {
            Thread { [unowned self] in
                defer { done.signal() }
                do {
                    try churn(context, endpoint: endpoint, cookie: cookie, names: "churn\(index)", clients: clients)
                } catch {
                    lock.withLock { failure = error }
                }
            }.start()
        }
    }

    private func churn(_ context: Context, endpoint: String, cookie: String, names: String, clients: Int) throws {
        var n = 0
        while let running = lock.withLock({ stopping ? nil : on }) {
            guard running else { usleep(2_000); continue }  // switched off: the poll between rounds
            var sockets: [Socket] = []
            for _ in 0..<clients {
                let socket = try Socket(context, .dealer)
                try socket.setLinger(milliseconds: 0)
                try socket.setReceiveTimeout(milliseconds: 2_000)
                try socket.connect(endpoint)
                let hello = Hello(name: "\(names)-\(n % 200)", role: .generic, subscriptions: [""], acknowledges: false, credential: cookie)
                _ = try socket.send(WireCodec.encode(.hello(hello)))
                sockets.append(socket)
                n += 1
            }
            var welcomed = 0
            for socket in sockets {
                if let frames = try socket.receive(), case .welcome = try WireCodec.decodeBrokerMessage(frames) {
                    welcomed += 1
                    _ = try socket.send(WireCodec.encode(.bye))
                }
                socket.close()
            }
            lock.withLock { hellos += sockets.count; welcomes += welcomed }
        }
    }

    /// Switches the churn on or off.
    func toggle() { lock.withLock { on.toggle() } }

    /// Stops the threads; how many hellos they sent and how many were welcomed, or the error one stopped on.
    func stop() throws -> (hellos: Int, welcomes: Int) {
        lock.withLock { stopping = true }
        for _ in 0..<threads { done.wait() }
        return try lock.withLock {
            if let failure { throw failure }
            return (hellos, welcomes)
        }
    }
}
