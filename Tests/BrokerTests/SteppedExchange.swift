// SteppedExchange: a broker in a test's thread over the transport seam, with peers the test plays or hosts.

@testable import Broker
import BusClient
import BusProtocol
import DeviceAPI
import Foundation
import ShieldBusTestSupport
import XCTest
import ZeroMQ

/// A broker in this test's thread, on a virtual clock, turned one pass at a time over the transport of `kind`. Its
/// peers are the test's own (`join`), or plugins the test hosts on threads of its process (`pluginEnvironment`).
final class SteppedExchange {
    enum Kind {
        case zeroMQ
        /// The in-memory transport, stepped: its wait never blocks.
        case inMemory
        /// The in-memory transport for plugins on other threads: the loop's wait blocks until one of them sends.
        case inMemoryThreaded
    }

    /// One of the test's clients, as it sees the bus.
    final class Peer {
        let name: String
        let identity: [UInt8]
        /// Its socket, over libzmq.
        let socket: Socket?
        /// Every message the broker sent it, in order.
        private(set) var arrived: [BrokerMessage] = []

        init(name: String, socket: Socket?) {
            self.name = name
            identity = Array(name.utf8)
            self.socket = socket
        }

        func take(_ frames: [[UInt8]]) throws { arrived.append(try WireCodec.decodeBrokerMessage(frames)) }

        var events: [Envelope] {
            arrived.compactMap { if case .event(let envelope, _) = $0 { return envelope } else { return nil } }
        }

        var topics: [String] { events.map(\.topic) }
        var refusals: [String] { arrived.compactMap { if case .error(let report) = $0 { return report.code } else { return nil } } }
        var lastSeq: UInt64 { events.map(\.seq).max() ?? 0 }
    }

    let broker: Broker
    let journalPath: String
    /// The in-memory transport (the broker's when the kind is `.inMemory`), which a test may drive directly.
    let transport: InMemoryTransport
    private let counting: CountingTransport
    private let lock: RuntimeLock
    private let runtime: RuntimeDirectory
    private let context: Context?
    private var peers: [Peer] = []
    private let work: TemporaryDirectory
    private var finished = false

    /// `grants`: the roles the peers may take; `services`: in-process services (the device OS), made in the run's folder;
    /// `acknowledgementTimeout`: how long virtual time waits for a plugin's acknowledgement (milliseconds).
    /// `deliveryStore`: the broker keeps `bus.sqlite` in the run's folder, as a run's broker does; `crashPoint`: a fault
    /// test's (`shieldbus run --crash-before-saving`).
    init(_ kind: Kind, grants: [ClientGrant] = ClientGrant.defaults, acknowledgementTimeout: Int64 = 600_000, deliveryStore: Bool = false,
         crashPoint: CrashPoint? = nil, services: (TemporaryDirectory) throws -> [BrokerService] = { _ in [] }) throws {
        let work = TemporaryDirectory()
        let runtime = RuntimeDirectory(path: work.path + "/run")
        var settings = BrokerSettings(runtimeDirectory: runtime, table: .screenTime)
        settings.outsideClients = grants
        settings.journalPath = work.path + "/journal.jsonl"
        if deliveryStore { settings.deliveryStorePath = work.path + "/bus.sqlite" }
        settings.crashPoint = crashPoint
        // The peers send no heartbeats and acknowledge at their own pace: a slow step on a loaded machine must
        // neither end their sessions nor excuse them from acknowledging (either would be journaled in one run only).
        settings.sessionTimeoutMilliseconds = 600_000
        settings.acknowledgementTimeoutMilliseconds = acknowledgementTimeout
        let broker = Broker(settings: settings, clock: BusClock(mode: .virtual, start: 0))
        for service in try services(work) { broker.addService(service) }
        let lock = try RuntimeLock(runtime)
        let memory = InMemoryTransport(waits: kind == .inMemoryThreaded)
        var made: CountingTransport?
        try broker.open(lock: lock, handlingSignals: false) {
            let inner: BusTransport = kind == .zeroMQ
                ? try ZeroMQTransport(try ZeroMQTransport.endpoint(settings.bindEndpoint), settings: settings, lock: lock, logger: broker.logger, countRefusal: { _ in })
                : memory
            made = CountingTransport(inner)
            return made!
        }
        (self.work, self.runtime, self.broker, self.lock, self.transport) = (work, runtime, broker, lock, memory)
        journalPath = settings.journalPath!
        counting = made!
        context = kind == .zeroMQ ? try Context() : nil
    }

    /// The launch environment of a plugin hosted in this process that connects to this broker: its endpoint (the
    /// in-memory one, or libzmq's) and the runtime directory whose cookie admits it as an outside client.
    var pluginEnvironment: [String: String] {
        ["SHIELDBUS_ENDPOINT": counting.endpoint, "SHIELDBUS_RUNTIME_DIR": runtime.path]
    }

    /// Turns the broker's loop until `done` holds and the bus is quiet (every delivery acknowledged, nothing queued
    /// or held), or fails after 20 s: what the plugins on other threads do in their turns is then all done.
    func turnUntilQuiet(_ what: String, _ done: () -> Bool) throws {
        let deadline = monotonicMilliseconds() + 20_000
        while true {
            try broker.serveOnce()
            for peer in peers { try collect(peer, deadline: deadline) }
            if done() && broker.isQuiet { return }
            guard monotonicMilliseconds() < deadline else { throw SeamTestFailure("the bus did not settle with \(what)") }
        }
    }

    /// A peer says hello with the runtime directory's cookie, and takes its welcome.
    func join(_ name: String, role: Role, subscriptions: [String], observing: [String] = [], acknowledges: Bool? = nil,
              watch: StateWatch? = nil) throws -> Peer {
        var socket: Socket?
        if let context {
            let dealer = try Socket(context, .dealer)
            try dealer.setRoutingID(Array(name.utf8))
            try dealer.setLinger(milliseconds: 0)
            try dealer.connect(counting.endpoint)
            socket = dealer
        }
        let peer = Peer(name: name, socket: socket)
        peers.append(peer)
        try step(peer, .hello(Hello(name: name, role: role, subscriptions: subscriptions, acknowledges: acknowledges,
                                    credential: role == .tool ? runtime.toolCredential() : runtime.cookie(), observations: observing,
                                    watch: watch)))
        guard case .welcome? = peer.arrived.first else { throw SeamTestFailure("\(name) was not welcomed: \(peer.arrived)") }
        return peer
    }

    /// `peer` sends `message`; the broker's loop turns until it has taken the message in (and what came with it
    /// is handled in the same pass); then every peer takes in all the broker sent it.
    func step(_ peer: Peer, _ message: ClientMessage) throws {
        let received = counting.received
        let frames = WireCodec.encode(message)
        if let socket = peer.socket {
            guard try socket.send(frames) else { throw SeamTestFailure("\(peer.name) could not send") }
        } else {
            transport.arrive(from: peer.identity, frames)
        }
        let deadline = monotonicMilliseconds() + 10_000
        while counting.received == received {
            guard monotonicMilliseconds() < deadline else { throw SeamTestFailure("the broker did not receive \(peer.name)'s \(message.kind)") }
            try broker.serveOnce()
        }
        for each in peers { try collect(each, deadline: deadline) }
    }

    /// `peer` sends `message`, and the loop turns until `done` holds and the bus is quiet (`turnUntilQuiet`).
    func step(_ peer: Peer, _ message: ClientMessage, until what: String, _ done: () -> Bool) throws {
        try step(peer, message)
        try turnUntilQuiet(what, done)
    }

    /// Turns the broker's loop until `peer` has what `arrived` asks for, or fails after 10 s.
    func turnUntil(_ peer: Peer, _ arrived: (Peer) -> Bool) throws -> Peer {
        let deadline = monotonicMilliseconds() + 10_000
        while !arrived(peer) {
            guard monotonicMilliseconds() < deadline else { throw SeamTestFailure("\(peer.name) got only \(peer.topics)") }
            try broker.serveOnce()
            try collect(peer, deadline: deadline)
        }
        return peer
    }

    /// Takes in everything the broker has sent `peer` so far: at once in memory, as it crosses the socket over libzmq.
    private func collect(_ peer: Peer, deadline: Int64) throws {
        guard let socket = peer.socket else {
            for frames in transport.takeSent(to: peer.identity) { try peer.take(frames) }
            return
        }
        let expected = counting.sent[peer.identity, default: 0]
        while peer.arrived.count < expected {
            guard monotonicMilliseconds() < deadline else { throw SeamTestFailure("\(peer.name) got \(peer.arrived.count) of \(expected) messages") }
            var poller = Poller()
            try poller.addReadable(socket)
            guard try poller.poll(timeoutMilliseconds: 100)[0] else { continue }
            while let frames = try socket.receive(dontWait: true) { try peer.take(frames) }
        }
    }

    /// Stops as the broker stops at the end of a run: `bus.stopping`, goodbyes, the journal closed.
    func finish() {
        guard !finished else { return }
        finished = true
        broker.shutDown()
        broker.close()
        for peer in peers { peer.socket?.close() }
        lock.release()
    }

    deinit { finish() }
}

/// Counts what crosses the seam: the messages the broker received, and those it sent each peer.
final class CountingTransport: BusTransport {
    private let inner: BusTransport
    private(set) var received = 0
    private(set) var sent: [[UInt8]: Int] = [:]

    init(_ inner: BusTransport) { self.inner = inner }

    var endpoint: String { inner.endpoint }
    var admitsPeersByKey: Bool { inner.admitsPeersByKey }

    func wait(timeoutMilliseconds: Int, wakeDescriptor: Int32?) throws -> TransportWake {
        try inner.wait(timeoutMilliseconds: timeoutMilliseconds, wakeDescriptor: wakeDescriptor)
    }

    func receive(into message: inout [[UInt8]]) throws -> Bool {
        let got = try inner.receive(into: &message)
        if got { received += 1 }
        return got
    }

    func send(_ frames: [[UInt8]], to peer: [UInt8]) {
        sent[peer, default: 0] += 1
        inner.send(frames, to: peer)
    }

    func send(head: UnsafeRawBufferPointer, envelope: EnvelopeFrame, to peer: [UInt8]) -> Bool {
        counted(inner.send(head: head, envelope: envelope, to: peer), peer)
    }

    func send(head: UnsafeRawBufferPointer, batch: EnvelopeBatch, to peer: [UInt8]) -> Bool {
        counted(inner.send(head: head, batch: batch, to: peer), peer)
    }

    private func counted(_ queued: Bool, _ peer: [UInt8]) -> Bool {
        if queued { sent[peer, default: 0] += 1 }
        return queued
    }

    func close() { inner.close() }
}

struct SeamTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
