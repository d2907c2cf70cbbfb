// ZeroMQTransport: the production transport — one libzmq ROUTER socket, with CURVE and its allowlist on tcp.

import BusClient
import Foundation
import Logging
import ZeroMQ

/// The bus on libzmq: every peer is a DEALER connected to one ROUTER, known by its routing identity. On ipc the
/// socket file is private to the broker's user; on tcp only CURVE clients whose key is on the allowlist get in
/// (security.md).
final class ZeroMQTransport: BusTransport {
    let endpoint: String
    // No context is kept: the sockets keep theirs alive, so closing them ends it (flushing the byes) inside `run()`.
    private let router: Socket
    private let guards: TransportGuards?
    private let logger: Logger
    /// Counts a refused connection under its error code (`status`).
    private let countRefusal: (String) -> Void
    private var poller: Poller?
    private var refusalLog = RefusalLog()

    /// On tcp: libzmq lets only clients with a key on the allowlist through, so each of them is admitted as the cookie admits.
    var admitsPeersByKey: Bool { guards != nil }

    /// What kind of endpoint `bindEndpoint` is; a bad one is refused before the broker touches any state.
    static func endpoint(_ bindEndpoint: String) throws -> BusEndpoint {
        do { return try BusEndpoint(bindEndpoint) } catch let error as BusEndpointError { throw ListenError.badEndpoint(error) }
    }

    /// Binds `settings.bindEndpoint` (of kind `endpointKind`); on tcp it first publishes the CURVE keys in the runtime
    /// directory (`lock`).
    init(_ endpointKind: BusEndpoint, settings: BrokerSettings, lock: RuntimeLock, logger: Logger, countRefusal: @escaping (String) -> Void) throws {
        self.logger = logger
        self.countRefusal = countRefusal
        let context = try Context()
        let router = try Socket(context, .router)
        try router.setRouterMandatory(true)
        try router.setSendHighWaterMark(settings.deliveryHighWaterMark)
        try router.setReceiveHighWaterMark(settings.deliveryHighWaterMark)
        try router.setMaximumMessageSize(settings.maximumFrameBytes)
        var guards: TransportGuards?
        if endpointKind.needsCurve {
            guard let curve = settings.curve else { throw ListenError.curveRequired(endpoint: settings.bindEndpoint) }
            guard Curve.isAvailable else { throw ListenError.curveUnavailable(libzmqVersion: libzmqVersion) }
            // The user's own clients (supervised plugins, the command line's tools) use a key made for this run.
            let local = try CurveKeyPair.generate()
            var allowed = curve.allowedClients
            allowed[local.publicKey] = "local"
            // The ZAP handler must be bound before the router: with none, libzmq admits every CURVE peer.
            guards = TransportGuards(zap: try ZAPHandler(context), monitor: try SocketMonitor(router, context: context, name: "shieldbus.router.monitor"),
                                     allowedClients: allowed)
            try router.makeCurveServer(curve.serverKeys)
            try lock.publishCurveKeys(server: curve.serverKeys, localClient: local)
        }
        do {
            try router.bind(settings.bindEndpoint)
            if case .ipc(let path) = endpointKind { chmod(path, 0o600) }
            endpoint = settings.bindEndpoint.contains(":*") ? try router.lastEndpoint() : settings.bindEndpoint
        } catch {
            guards?.close()
            throw error
        }
        (self.router, self.guards) = (router, guards)
    }

    func wait(timeoutMilliseconds: Int, wakeDescriptor: Int32?) throws -> TransportWake {
        if poller == nil { poller = try makePoller(wakeDescriptor) }
        let ready = try poller!.poll(timeoutMilliseconds: timeoutMilliseconds)
        if let guards, ready[2] || ready[3] { try admit(guards) }
        return TransportWake(messagesWaiting: ready[0], woken: wakeDescriptor != nil && ready[1])
    }

    /// The router first, the wake descriptor second (a closed one when there is none), then the guards.
    private func makePoller(_ wakeDescriptor: Int32?) throws -> Poller {
        var poller = Poller()
        try poller.addReadable(router)
        poller.addReadable(fileDescriptor: wakeDescriptor ?? -1)
        if let guards {
            try poller.addReadable(guards.zap.pollable)
            try poller.addReadable(guards.monitor.pollable)
        }
        return poller
    }

    func receive(into message: inout [[UInt8]]) throws -> Bool {
        try router.receive(into: &message, dontWait: true)
    }

    func send(_ frames: [[UInt8]], to peer: [UInt8]) {
        _ = try? router.send([peer] + frames, dontWait: true)
    }

    func send(head: UnsafeRawBufferPointer, envelope: EnvelopeFrame, to peer: [UInt8]) -> Bool {
        let frame = envelope.transportCopy as? SharedFrame ?? SharedFrame(envelope.json)
        envelope.transportCopy = frame
        return send(head: head, frame: frame, to: peer)
    }

    func send(head: UnsafeRawBufferPointer, batch: EnvelopeBatch, to peer: [UInt8]) -> Bool {
        let frame = batch.transportCopy as? SharedFrame ?? SharedFrame(size: batch.byteCount, batch.write(into:))
        batch.transportCopy = frame
        return send(head: head, frame: frame, to: peer)
    }

    /// Two frames after the identity: the per-receiver head, copied, and the shared frame, which only gains a reference.
    @inline(__always)
    private func send(head: UnsafeRawBufferPointer, frame: SharedFrame, to peer: [UInt8]) -> Bool {
        do {
            return try router.send(routingID: peer, header: head, shared: frame, dontWait: true)
        } catch {
            return false  // EHOSTUNREACH: the peer is gone; its session will time out
        }
    }

    func close() {
        router.close()
        guards?.close()
    }

    // MARK: Admission on tcp

    /// The ZAP handler and the router's monitor, when the bus listens on tcp.
    private struct TransportGuards {
        let zap: ZAPHandler
        let monitor: SocketMonitor
        /// Public key (Z85) → the name logs give its holder.
        let allowedClients: [String: String]

        func close() {
            zap.close()
            monitor.close()
        }
    }

    /// Answers libzmq's questions about connecting peers (only keys on the allowlist get in), and logs and counts
    /// the peers whose handshake failed (no CURVE, a wrong server key, a refused key).
    private func admit(_ guards: TransportGuards) throws {
        try guards.zap.answerPending { request in
            guard request.mechanism == "CURVE", let raw = request.credentials.first, let key = Curve.encode(raw) else {
                return .refuse(reason: "CURVE required")
            }
            if let name = guards.allowedClients[key] { return .admit(userID: name) }
            countRefusal("curve-refused")
            if let refusals = refusalLog.refusal("curve-refused", now: monotonicMilliseconds()) {
                logger.warning("refused a tcp client: its CURVE key is not on the allowlist (bus.curve.allow)",
                               metadata: ["address": "\(request.address)", "key": "\(key)", "refusals": "\(refusals)"])
            }
            return .refuse(reason: "key not on the allowlist")
        }
        for event in try guards.monitor.pending() {
            switch event.kind {
            case .handshakeFailedProtocol, .handshakeFailedNoDetail:
                countRefusal("curve-handshake-failed")
                // libzmq clients reconnect every 100 ms: one line a second says enough.
                guard let refusals = refusalLog.refusal("curve-handshake-failed", now: monotonicMilliseconds()) else { continue }
                logger.warning("refused a tcp client: no CURVE handshake (a client without keys, or with the wrong broker key)",
                               metadata: ["endpoint": "\(event.endpoint)", "refusals": "\(refusals)"])
            default:
                break  // refusals by key were logged when ZAP was asked
            }
        }
    }
}
