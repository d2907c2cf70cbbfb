import BusProtocol
import Foundation
import ZeroMQ

/// Milliseconds on a monotonic clock, for heartbeats and timeouts (never for bus time).
public func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// What a client counts about its own connection.
public struct ConnectionStatistics: Equatable, Sendable {
    /// Events received.
    public var events: UInt64 = 0
    /// Times the delivery counter jumped.
    public var gaps: UInt64 = 0
    /// Deliveries that never arrived (the sum of all gaps).
    public var missedDeliveries: UInt64 = 0
    /// Times the client said hello again after losing the broker.
    public var reconnects: UInt64 = 0
}

/// One client's connection to the broker over its transport (a DEALER socket; in tests, an in-memory pair):
/// hello/welcome, publishing, acknowledging, heartbeats both ways, delivery-gap detection, and a fresh hello when
/// the broker restarts.
///
/// Not thread-safe: drive it from one thread.
public final class BusConnection {
    public let endpoint: String
    public private(set) var hello: Hello
    public private(set) var welcome: Welcome?
    public private(set) var statistics = ConnectionStatistics()
    /// Called when deliveries `range` never arrived (the broker or libzmq dropped them).
    public var onGap: ((ClosedRange<UInt64>) -> Void)?
    /// Called after the client said hello again to a restarted broker and was welcomed.
    public var onReconnect: ((Welcome) -> Void)?

    private let transport: ClientTransport
    private var nextDelivery: UInt64 = 1
    /// The last batch (`events`) received, and which of its events is the next to return.
    private var batch = EventBatch(firstDelivery: 0, envelopes: [])
    private var batchHead = 0
    /// When the broker was last heard from (any message, a heartbeat too): monotonic ms.
    public private(set) var lastHeardFromBroker = monotonicMilliseconds()
    private var lastSent = monotonicMilliseconds()
    private var lastHelloSent: Int64 = 0
    /// The broker's heartbeat interval (its welcome's): it says something at least this often while it runs.
    public private(set) var heartbeatInterval: Int64 = 1000
    private var awaitingWelcome = false
    /// Between `renewSession` and the welcome of the new session: what the old session still hands over is not this
    /// client's to handle (the new one gives it back), and a resumed welcome answers an earlier hello.
    private var renewing = false
    private var closed = false
    /// Whether the credential was found rather than given: it is looked up again before each new hello.
    private let discoversCredential: Bool
    /// Where the cookie and, on tcp, the CURVE keys are.
    private let runtime: RuntimeDirectory
    /// The environment the client was started with (its per-launch credential): an in-process plugin's own, or nil
    /// for the process's (read when a credential is looked up).
    private let environment: [String: String]?

    /// The client's credential for `endpoint` as `role`; on tcp the files are the given runtime directory's.
    private static func credential(endpoint: String, runtime: RuntimeDirectory, role: Role, environment: [String: String]?) -> String? {
        var environment = environment ?? ProcessEnvironment.current
        environment["SHIELDBUS_RUNTIME_DIR"] = runtime.path
        return BusCredential.forClient(endpoint: endpoint, actsForPerson: role == .tool, environment: environment)
    }

    /// Creates the socket and starts connecting; call `connect` to say hello. A hello without a credential gets
    /// the one this process has (`BusCredential.forClient`): its per-launch credential, or the runtime directory's
    /// cookie — unless `curve` gives the client's own keys, which admit it without one.
    ///
    /// A tcp endpoint needs CURVE keys: `curve`, else those found in the runtime directory
    /// (`CurveClientKeys.discover`). An ipc socket this user may not open is reported as permission denied
    /// at once, rather than as a broker that never answers. An in-memory endpoint (`InMemoryEndpoints`, tests only)
    /// connects to the broker that serves it in this process. `environment` is where a credential is looked up:
    /// the process's, unless the client is a plugin hosted in a test's process with its own.
    public init(endpoint: String, hello: Hello, curve: CurveClientKeys? = nil, runtime: RuntimeDirectory = .resolve(nil),
                environment: [String: String]? = nil) throws {
        self.endpoint = endpoint
        self.environment = environment
        var hello = hello
        hello.readsBatches = true  // `nextMessage` takes a batch apart into its events
        // A client given its own CURVE keys is admitted by them: a cookie found on this machine may be another broker's.
        discoversCredential = hello.credential == nil && curve == nil
        self.runtime = runtime
        if discoversCredential { hello.credential = BusConnection.credential(endpoint: endpoint, runtime: runtime, role: hello.role, environment: environment) }
        self.hello = hello
        if endpoint.hasPrefix(InMemoryEndpoints.scheme) {
            guard let transport = InMemoryEndpoints.connect(endpoint) else { throw BusClientError.noBroker(runtimeDirectory: endpoint) }
            self.transport = transport
            return
        }
        var keys = curve
        if endpoint.hasPrefix("tcp://"), keys == nil {
            do {
                keys = try CurveClientKeys.discover(runtime: runtime)
            } catch CurveCertificate.ReadError.permissionDenied(let path) {
                throw BusClientError.permissionDenied(path: path)
            } catch let error as CurveCertificate.ReadError {
                throw BusClientError.curveKeys(error)
            }
        }
        if endpoint.hasPrefix("ipc://") {
            let path = String(endpoint.dropFirst("ipc://".count))
            if access(path, R_OK | W_OK) != 0 && errno == EACCES { throw BusClientError.permissionDenied(path: path) }
        }
        do {
            transport = try ZeroMQClientTransport(endpoint: endpoint, curve: keys)
        } catch let error as ZMQError {
            throw BusClientError.transport(error)
        }
    }

    deinit { close() }

    /// Says hello and waits for the welcome; ends with `BusClientError.stoppedBeforeWelcome` within
    /// `stopCheckMilliseconds` of `isStopRequested` (the caller's stop flag) holding.
    @discardableResult
    public func connect(timeoutMilliseconds: Int = 5000, stopWhen isStopRequested: () -> Bool = { false }) throws -> Welcome {
        try send(.hello(hello))
        awaitingWelcome = true
        lastHelloSent = monotonicMilliseconds()
        let deadline = monotonicMilliseconds() + Int64(timeoutMilliseconds)
        while welcome == nil || awaitingWelcome {
            let remaining = deadline - monotonicMilliseconds()
            guard remaining > 0 else { throw BusClientError.brokerNotAnswering(endpoint: endpoint, waitedMilliseconds: timeoutMilliseconds) }
            // A process asked to stop does not wait out the broker's silence. The signal that asks may reach
            // another of its threads (libzmq's) and leave this wait running, so the flag is read every slice.
            // A cut (a hosted plugin killed: the welcome can never come) is said as such, whatever flag its host set
            // with it.
            if isCut { throw BusClientError.cut(endpoint: endpoint) }
            if isStopRequested() { throw BusClientError.stoppedBeforeWelcome(endpoint: endpoint) }
            // A wait on a cut end ends at once, and the check above says so.
            guard let message = try nextMessage(timeoutMilliseconds: Int(min(remaining, Self.stopCheckMilliseconds))) else { continue }
            switch message {
            case .error(let report): throw BusClientError.refused(report)
            case .bye(let reason): throw BusClientError.brokerLeft(reason: reason)
            default: continue  // events can only follow the welcome; nothing else matters here
            }
        }
        return welcome!
    }

    /// Puts an event on the bus. Errors about it come back asynchronously as `error` messages.
    public func publish(_ publish: Publish) throws {
        try send(.publish(publish))
    }

    /// Acknowledges every event delivered to this client up to and including `seq`.
    public func acknowledge(seq: UInt64) throws {
        try send(.ack(seq: seq))
    }

    /// How long `connect` waits before reading its caller's stop flag again (ms).
    static let stopCheckMilliseconds: Int64 = 250

    /// Whether `nextMessage`'s wait ended because a signal arrived.
    private var waitWasInterrupted = false

    /// Waits up to `timeoutMilliseconds` for the next message for the caller: an event, an error, a status
    /// report or a bye. Heartbeats, welcomes and reconnects are handled here and not returned. A signal ends the
    /// wait early (nil), so that a caller looping on its own stop flag sees it at once.
    public func receive(timeoutMilliseconds: Int) throws -> BrokerMessage? {
        // One clock reading per message while they keep coming (the clock is a measurable share of a busy client).
        var now = monotonicMilliseconds()
        let deadline = now + Int64(timeoutMilliseconds)
        while true {
            try maintain(now: now)
            let wait = Int(min(max(0, deadline - now), heartbeatInterval))
            if let message = try nextMessage(timeoutMilliseconds: wait, now: now) {
                switch message {
                case .welcome, .heartbeat: break
                case .error(let report) where report.code == BusProtocolError.helloRequired(kind: "").code:
                    try sayHelloAgain(resume: false)  // the broker restarted and no longer knows us
                default: return message
                }
            }
            now = monotonicMilliseconds()
            // A signal (a stop request) ends the wait early, so the caller sees its flag now, not at the deadline;
            // so does a cut, after which nothing comes.
            if now >= deadline || waitWasInterrupted || isCut { return nil }
        }
    }

    /// Whether the broker has said nothing, not even a heartbeat, for three of its heartbeat intervals: it is gone,
    /// or stopped (and this connection says hello again at its next chance).
    public var brokerIsSilent: Bool { monotonicMilliseconds() - lastHeardFromBroker > heartbeatInterval * 3 }

    /// Sends heartbeats when due and says hello again when the broker has been silent too long.
    public func maintain() throws {
        try maintain(now: monotonicMilliseconds())
    }

    private func maintain(now: Int64) throws {
        if now - lastSent >= heartbeatInterval { try send(.heartbeat) }
        let silentFor = now - lastHeardFromBroker
        if silentFor > heartbeatInterval * 3 && now - lastHelloSent > heartbeatInterval && !hasWaitingMessages() {
            // Gone, or only stopped or starved of CPU: a broker that still holds this session resumes it as it was,
            // so that its silence changes nothing on the bus (in virtual time, nothing in the journal).
            try sayHelloAgain(resume: !renewing)
        }
    }

    /// Asks the broker for its status report.
    public func status(timeoutMilliseconds: Int = 3000) throws -> JSONValue {
        try send(.status(credential: hello.credential))
        let deadline = monotonicMilliseconds() + Int64(timeoutMilliseconds)
        while monotonicMilliseconds() < deadline {
            if case .status(let report)? = try nextMessage(timeoutMilliseconds: Int(deadline - monotonicMilliseconds())) {
                return report
            }
        }
        throw BusClientError.brokerNotAnswering(endpoint: endpoint, waitedMilliseconds: timeoutMilliseconds)
    }

    /// Says goodbye and closes the transport (which waits, up to libzmq's linger, for the bye to leave). Safe to call twice.
    public func close() {
        guard !closed else { return }
        closed = true
        if welcome != nil { try? send(.bye) }
        transport.close()
    }

    /// Cuts the connection at once, from any thread, as a killed process's socket is cut, when its transport can
    /// (`ClientTransport.cut`): tests that host plugins in their process kill them so.
    public func cut() { transport.cut() }

    /// Whether the connection was cut (`cut`) or closed: nothing more comes on it. Safe from any thread.
    public var isCut: Bool { transport.isCut }

    // MARK: Internals

    /// Whether messages are queued unread: a client that was busy is not one the broker forgot.
    private func hasWaitingMessages() -> Bool {
        if batchHead < batch.envelopes.count { return true }
        return (try? transport.waitReadable(timeoutMilliseconds: 0).ready) ?? false
    }

    /// Asks for a new session even from a broker that still holds this one: what the client had in hand is given
    /// back to it there (a call abandoned while the broker was silent leaves its event to be handled again).
    public func renewSession() throws {
        renewing = true
        try sayHelloAgain(resume: false)
    }

    private func sayHelloAgain(resume: Bool) throws {
        if discoversCredential { hello.credential = BusConnection.credential(endpoint: endpoint, runtime: runtime, role: hello.role, environment: environment) }  // a new broker may have a new cookie
        statistics.reconnects += 1
        awaitingWelcome = true
        lastHelloSent = monotonicMilliseconds()
        var again = hello
        again.resume = resume
        try send(.hello(again))
    }

    private func send(_ message: ClientMessage) throws {
        do {
            try transport.send(WireCodec.encode(message))
            lastSent = monotonicMilliseconds()
        } catch let error as ZMQError {
            throw BusClientError.transport(error)
        }
    }

    /// Reads one message (or nil on timeout), updating liveness, welcome state and delivery accounting. `now` is
    /// the caller's clock reading, taken just before.
    private func nextMessage(timeoutMilliseconds: Int, now: Int64 = monotonicMilliseconds()) throws -> BrokerMessage? {
        waitWasInterrupted = false
        if batchHead < batch.envelopes.count {
            batchHead += 1
            return try counted(.event(batch.envelopes[batchHead - 1], delivery: batch.firstDelivery + UInt64(batchHead - 1)))
        }
        let frames: [[UInt8]]
        do {
            // A busy client usually finds its next message already queued: take it without a poll (a system
            // call and two allocations per message); wait only when nothing is there.
            if let waiting = try transport.receiveNow() {
                frames = waiting
                lastHeardFromBroker = now
            } else {
                let (ready, interrupted) = try transport.waitReadable(timeoutMilliseconds: timeoutMilliseconds)
                waitWasInterrupted = interrupted
                guard ready, let received = try transport.receiveNow() else { return nil }
                frames = received
                lastHeardFromBroker = monotonicMilliseconds()
            }
        } catch let error as ZMQError {
            throw BusClientError.transport(error)
        }
        let message: BrokerMessage
        do {
            // Several events in one message: returned one by one, from this call on.
            if let received = try WireCodec.decodeEventBatch(frames) {
                batch = received
                batchHead = 1
                return try counted(.event(batch.envelopes[0], delivery: batch.firstDelivery))
            }
            message = try WireCodec.decodeBrokerMessage(frames)
        } catch let error as BusProtocolError {
            throw BusClientError.protocolViolation(error)
        }
        return try counted(message)
    }

    /// Updates the welcome state and the delivery accounting with `message`, and returns it — or nil for what the
    /// session being renewed still sends: its events come again in the new session, and an ack of one handled now
    /// would cover, by its seq, an earlier event the new session gives back to be handled again.
    private func counted(_ message: BrokerMessage) throws -> BrokerMessage? {
        switch message {
        case .welcome(let welcome) where welcome.resumed && renewing:
            return nil
        case .event where renewing:
            return nil
        case .welcome(let welcome) where welcome.resumed && self.welcome != nil:
            // The session goes on: its delivery numbers, and whatever the client has in hand, stay as they were.
            awaitingWelcome = false
            heartbeatInterval = max(50, welcome.heartbeatMilliseconds)
        case .welcome(let welcome):
            let isReconnect = self.welcome != nil
            renewing = false
            self.welcome = welcome
            awaitingWelcome = false
            heartbeatInterval = max(50, welcome.heartbeatMilliseconds)
            nextDelivery = 1  // a new session counts deliveries from 1
            if isReconnect { onReconnect?(welcome) }
        case .event(_, let delivery):
            statistics.events += 1
            if delivery > nextDelivery {
                let missed = nextDelivery...(delivery - 1)
                statistics.gaps += 1
                statistics.missedDeliveries += UInt64(missed.count)
                try send(.gap(from: missed.lowerBound, to: missed.upperBound))
                onGap?(missed)
            }
            nextDelivery = max(nextDelivery, delivery + 1)
        default:
            break
        }
        return message
    }
}
