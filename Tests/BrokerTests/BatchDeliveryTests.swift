import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest
import ZeroMQ

/// Batches through the real broker (real clock): publishes that wait on its socket together reach a client that
/// reads batches in `events` messages, and a client that did not say `batches` one `event` at a time — the same
/// events, delivery numbers and order for both, nothing dropped, and acknowledgements by seq as without batches.
final class BatchDeliveryTests: XCTestCase {
    /// A bare DEALER that says hello and records each event with its delivery number and how it came.
    final class RawReader {
        let name: String
        private let context: Context
        private let socket: Socket
        private(set) var events: [(delivery: UInt64, envelope: Envelope)] = []
        /// `events` messages and `event` messages received.
        private(set) var batches = 0
        private(set) var singles = 0
        private var lastSent = monotonicMilliseconds()

        init(_ broker: BrokerProcess, name: String, readsBatches: Bool) throws {
            self.name = name
            context = try Context()
            socket = try Socket(context, .dealer)
            try socket.setReceiveTimeout(milliseconds: 100)
            try socket.connect(broker.runtime.brokerEndpoint())
            try socket.send(WireCodec.encode(.hello(Hello(name: name, role: .generic, subscriptions: ["app.batch"], acknowledges: true,
                                                          credential: broker.runtime.cookie(), readsBatches: readsBatches))))
            let deadline = monotonicMilliseconds() + 5000
            while monotonicMilliseconds() < deadline {
                if let frames = try socket.receive(), case .welcome = try WireCodec.decodeBrokerMessage(frames) { return }
            }
            throw BusClientError.brokerNotAnswering(endpoint: broker.runtime.brokerEndpoint(), waitedMilliseconds: 5000)
        }

        /// Reads until `count` events in all have come (or 10 s passed), heartbeating meanwhile.
        func receive(untilCount count: Int) throws {
            let deadline = monotonicMilliseconds() + 10_000
            while events.count < count && monotonicMilliseconds() < deadline {
                if monotonicMilliseconds() - lastSent > 500 { try send(.heartbeat) }
                guard let frames = try socket.receive() else { continue }
                if let batch = try WireCodec.decodeEventBatch(frames) {
                    batches += 1
                    events += batch.deliveries.map { ($0.delivery, $0.envelope) }
                } else if case .event(let envelope, let delivery) = try WireCodec.decodeBrokerMessage(frames) {
                    singles += 1
                    events.append((delivery, envelope))
                }
            }
        }

        func send(_ message: ClientMessage) throws {
            try socket.send(WireCodec.encode(message))
            lastSent = monotonicMilliseconds()
        }

        func close() { socket.close() }
    }

    func testPublishesWaitingTogetherReachABatchReaderInOneMessageAndOthersOneByOne() throws {
        let broker = try BrokerProcess(configuration: "name: batches\n")
        defer { broker.stop() }
        let batchReader = try RawReader(broker, name: "batch-reader", readsBatches: true)
        let singleReader = try RawReader(broker, name: "single-reader", readsBatches: false)
        defer { batchReader.close(); singleReader.close() }
        let publisher = try broker.connect(name: "burst", role: .generic, subscriptions: [])
        defer { publisher.close() }

        // The broker stopped while a burst is sent, so the publishes wait on its socket together when it goes on.
        // Whether it finds them all at once is up to libzmq's I/O thread, so a burst is tried a few times.
        var published = 0
        for _ in 0..<5 where batchReader.batches == 0 {
            kill(broker.process.processIdentifier, SIGSTOP)
            for _ in 0..<200 {
                try publisher.publish(Publish(topic: "app.batch", body: ["n": .int(Int64(published))]))
                published += 1
            }
            kill(broker.process.processIdentifier, SIGCONT)
            try batchReader.receive(untilCount: published)
            try singleReader.receive(untilCount: published)
        }
        XCTAssertGreaterThan(batchReader.batches, 0, "a burst of \(published) publishes came in \(batchReader.singles) single events")
        XCTAssertEqual(singleReader.batches, 0, "a client that did not say `batches` gets none")
        for reader in [batchReader, singleReader] {
            XCTAssertEqual(reader.events.map(\.delivery), Array(1...UInt64(published)), "\(reader.name): every delivery number once, in order")
            XCTAssertEqual(reader.events.map { $0.envelope.bodyValue["n"]?.intValue }, (0..<published).map { Int64($0) }, "\(reader.name): in publishing order")
            let seqs = reader.events.map(\.envelope.seq)
            XCTAssertEqual(seqs, Array(seqs[0]...(seqs[0] + UInt64(published) - 1)), "\(reader.name): consecutive seqs")
        }
        XCTAssertEqual(batchReader.events.map(\.envelope), singleReader.events.map(\.envelope), "the same envelopes, byte for byte")
        XCTAssertEqual(try broker.status()["counters"]?["dropped"]?.intValue, 0)

        // Acknowledging part of what came in batches leaves the rest waiting, by seq as always.
        let seqs = batchReader.events.map(\.envelope.seq)
        let middle = published / 2
        try batchReader.send(.ack(seq: seqs[middle - 1]))
        XCTAssertTrue(try waitUntil("the batch reader's lag to be what it did not acknowledge") {
            lag(of: "batch-reader", in: try broker.status()) == Int64(published - middle)
        })
        try batchReader.send(.ack(seq: seqs.last!))
        XCTAssertTrue(try waitUntil("the batch reader's lag to be 0") { lag(of: "batch-reader", in: try broker.status()) == 0 })
    }

    func lag(of name: String, in status: JSONValue) -> Int64? {
        status["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == name }?["lag"]?.intValue
    }
}
