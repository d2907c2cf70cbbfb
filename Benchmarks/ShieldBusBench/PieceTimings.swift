import Broker
import DeviceAPI
import BusProtocol
import Foundation
import Synchronization
import ZeroMQ

/// The broker's per-event work, piece by piece, each timed alone in a tight loop on one thread — and, beside
/// it, what `zmq_proxy` does for the same event. Sockets use inproc:// so that no I/O thread runs meanwhile.
///
/// These are lower bounds: alone, nothing competes for the CPU or for malloc's locks. What the pieces cost in
/// the real run (with the I/O threads freeing what the broker allocated) is in the CPU table and in perf.
struct PieceTimings {
    struct Piece {
        let name: String
        /// What in Sources/ does this work.
        let code: String
        /// Nanoseconds per published event (for the broker's sends: for all of its receivers).
        let nanoseconds: Double
        /// Part of the piece before it (shown, not added to the total).
        var isPart = false
    }

    let subscribers: Int
    let broker: [Piece]
    let proxy: [Piece]

    var tableLines: [String] {
        var lines = ["where the broker's thread spends its time, per event, each piece timed alone (\(subscribers) receivers):"]
        for (title, pieces) in [("ShieldBus broker", broker), ("zmq_proxy, same event", proxy)] {
            lines.append("  \(title): \(Format.nanoseconds(total(pieces))) in all")
            for piece in pieces {
                lines.append("    \(Format.nanoseconds(piece.nanoseconds).leftPadding(9))  \(piece.name.padding(52)) \(piece.code)")
            }
        }
        return lines
    }

    /// The pieces' sum, without the parts of pieces.
    func total(_ pieces: [Piece]) -> Double { pieces.filter { !$0.isPart }.reduce(0) { $0 + $1.nanoseconds } }

    var json: JSONValue {
        func list(_ pieces: [Piece]) -> JSONValue {
            .array(pieces.map { ["name": .string($0.name.trimmingCharacters(in: .whitespaces)), "code": .string($0.code), "partOfPrevious": .bool($0.isPart),
                                 "nanosecondsPerEvent": .double(($0.nanoseconds * 10).rounded() / 10)] })
        }
        return ["subscribers": .int(Int64(subscribers)), "broker": list(broker), "proxy": list(proxy),
                "brokerNanosecondsPerEvent": .double(total(broker).rounded()), "proxyNanosecondsPerEvent": .double(total(proxy).rounded())]
    }

    /// Times every piece over `iterations` events of `bodyBytes`-byte bodies.
    static func measure(bodyBytes: Int, subscribers: Int, iterations: Int = 50_000) throws -> PieceTimings {
        let body = BodyMaker(bytes: bodyBytes).body(number: 123_456)
        let publish = Publish(topic: LoadShape.topic, body: body)
        let publishFrames = WireCodec.encode(.publish(publish))
        let clock = BusClock(mode: .real)
        let envelope = Envelope(seq: 1_234_567, time: clock.now(), topic: LoadShape.topic, source: "publisher", body: body)
        let envelopeJSON = WireCodec.encodeEnvelope(envelope)
        let context = try Context()
        var broker: [Piece] = []
        var proxy: [Piece] = []

        // In: the hub takes one message off its socket.
        broker.append(Piece(name: "receive a publish (identity + 2 frames)", code: "ZeroMQ Socket.receive on the ROUTER",
                            nanoseconds: try receiving(publishFrames, router: true, context: context, iterations: iterations)))
        proxy.append(Piece(name: "receive it (topic + body frames)", code: "zmq_proxy, XSUB",
                           nanoseconds: try receiving([Array(LoadShape.topic.utf8), body], router: false, context: context, iterations: iterations)))

        // Decode and check.
        broker.append(Piece(name: "decode + validate the publish", code: "WireCodec.decodeClientMessage (JSONObjectView, Fields)",
                            nanoseconds: time(iterations) { _ = try? WireCodec.decodeClientMessage(publishFrames[...]) }))
        broker.append(Piece(name: "  of which: topic syntax check", code: "BusTable.topicProblem(with:) (one pass over the bytes)",
                            nanoseconds: time(iterations) { _ = BusTable.screenTime.topicProblem(with: publish.topic) }, isPart: true))
        broker.append(Piece(name: "reserved-namespace check", code: "Authority.problem: BusTable.isSystemOnly, isKnownNamespace",
                            nanoseconds: time(iterations) { _ = BusTable.screenTime.isSystemOnly(publish.topic) || !BusTable.screenTime.isKnownNamespace(publish.topic) }))

        // Sequence: stamp and encode the envelope once.
        broker.append(Piece(name: "bus time", code: "BusClock.now (Date)", nanoseconds: time(iterations) { _ = clock.now() }))
        broker.append(Piece(name: "encode the envelope", code: "WireCodec.encodeEnvelope",
                            nanoseconds: time(iterations) { _ = WireCodec.encodeEnvelope(envelope) }))

        // Out: one send per receiver, the routing id and `event <delivery>` copied, the envelope shared.
        broker.append(Piece(name: "deliver to \(subscribers): 2 frames each, envelope shared", code: "Dispatcher.deliver → ZeroMQTransport → Socket.send(routingID:header:shared:)",
                            nanoseconds: try delivering(envelopeJSON, to: subscribers, context: context, iterations: iterations)))
        proxy.append(Piece(name: "send once to \(subscribers): XPUB fans out one refcounted message", code: "zmq_proxy, XPUB",
                           nanoseconds: try fanningOut(body, to: subscribers, context: context, iterations: iterations)))
        return PieceTimings(subscribers: subscribers, broker: broker, proxy: proxy)
    }

    /// Mean nanoseconds per call of `body` over `iterations` calls (after a tenth as many to warm up).
    static func time(_ iterations: Int, _ body: () -> Void) -> Double {
        for _ in 0..<max(1, iterations / 10) { body() }
        let start = monotonicNanoseconds()
        for _ in 0..<iterations { body() }
        return Double(monotonicNanoseconds() - start) / Double(iterations)
    }

    private static let endpointNumber = Atomic<Int>(0)
    private static func inprocEndpoint() -> String {
        "inproc://pieces-\(endpointNumber.add(1, ordering: .relaxed).newValue)"
    }

    /// Time to receive one message already queued: `frames` sent by a DEALER (to a ROUTER) or a PUB (to an XSUB).
    private static func receiving(_ frames: [Frame], router: Bool, context: Context, iterations: Int) throws -> Double {
        let endpoint = inprocEndpoint()
        let receiver = try Socket(context, router ? .router : .xsub)
        let sender = try Socket(context, router ? .dealer : .pub)
        defer { sender.close(); receiver.close() }
        for socket in [receiver, sender] {
            try socket.setReceiveHighWaterMark(0)
            try socket.setSendHighWaterMark(0)
        }
        try receiver.bind(endpoint)
        if !router { try receiver.send([[1] + Array(LoadShape.topic.utf8)]) }  // XSUB subscribes by sending 0x01 + prefix
        try sender.connect(endpoint)
        if !router {
            // The subscription reaches the PUB asynchronously; wait until a probe gets through.
            while true {
                try sender.send([Array(LoadShape.topic.utf8), [0]])
                if try receiver.receive(dontWait: true) != nil { break }
                usleep(1_000)
            }
            while try receiver.receive(dontWait: true) != nil {}
        }
        for _ in 0..<iterations { try sender.send(frames) }
        let start = monotonicNanoseconds()
        for _ in 0..<iterations { guard try receiver.receive() != nil else { throw BenchFailure("a queued message went missing") } }
        return Double(monotonicNanoseconds() - start) / Double(iterations)
    }

    /// Time for the broker's delivery of one event to `count` DEALER receivers, as `Dispatcher.deliver` sends it through `ZeroMQTransport`.
    private static func delivering(_ envelopeJSON: [UInt8], to count: Int, context: Context, iterations: Int) throws -> Double {
        let endpoint = inprocEndpoint()
        let router = try Socket(context, .router)
        try router.setSendHighWaterMark(0)
        try router.setRouterMandatory(true)
        try router.bind(endpoint)
        var receivers: [Socket] = []
        var identities: [[UInt8]] = []
        defer { for receiver in receivers { receiver.close() }; router.close() }
        for number in 0..<count {
            let receiver = try Socket(context, .dealer)
            try receiver.setReceiveHighWaterMark(0)
            let identity = Array("peer-\(number)".utf8)
            try receiver.setRoutingID(identity)
            try receiver.connect(endpoint)
            receivers.append(receiver)
            identities.append(identity)
        }
        var delivery: UInt64 = 0
        let perEvent = time(iterations) {
            delivery += 1
            let shared = SharedFrame(envelopeJSON)
            for identity in identities {
                _ = try? WireCodec.withEventHead(delivery: delivery) { head in
                    try router.send(routingID: identity, header: head, shared: shared, dontWait: true)
                }
            }
        }
        return perEvent
    }

    /// Time for an XPUB to send one two-frame message that `count` SUB peers subscribed to.
    private static func fanningOut(_ body: [UInt8], to count: Int, context: Context, iterations: Int) throws -> Double {
        let endpoint = inprocEndpoint()
        let xpub = try Socket(context, .xpub)
        try xpub.setSendHighWaterMark(0)
        try xpub.setXPubVerbose(true)  // report every subscription, not only the first to a topic
        try xpub.bind(endpoint)
        var receivers: [Socket] = []
        defer { for receiver in receivers { receiver.close() }; xpub.close() }
        for _ in 0..<count {
            let receiver = try Socket(context, .sub)
            try receiver.setReceiveHighWaterMark(0)
            try receiver.subscribe(LoadShape.topic)
            try receiver.connect(endpoint)
            receivers.append(receiver)
        }
        // Each subscription arrives at the XPUB as a message; once all are read, every SUB is attached.
        var subscriptions = 0
        while subscriptions < count { if try xpub.receive() != nil { subscriptions += 1 } }
        let topic = Array(LoadShape.topic.utf8)
        return time(iterations) { _ = try? xpub.send([topic, body]) }
    }
}

extension Format {
    static func nanoseconds(_ value: Double) -> String {
        value >= 1_000 ? String(format: "%.2f µs", value / 1_000) : String(format: "%.0f ns", value)
    }
}
