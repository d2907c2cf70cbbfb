// GroupedSavesTests: the batches of a loop pass share one bus.sqlite save, made before the first of them is sent.

@testable import Broker
import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// In virtual time a plugin's publications in its turn wait in the turn queue for the turn's end: nothing of them is
/// sent meanwhile, so the batches a pass sequences of them share one save, made before the next send or at the pass's
/// end (the broker's own peers, their messages taken in one pass, with `bus.sqlite` as a run's broker keeps it).
final class GroupedSavesTests: XCTestCase {
    func testTheBatchesOfOnePassAreSavedOnceBeforeTheFirstOfThemIsSent() throws {
        let (exchange, listener, worker) = try workerInItsTurn(SteppedExchange(.inMemory, deliveryStore: true))
        defer { exchange.finish() }
        let store = try XCTUnwrap(exchange.broker.ledger.store)
        var commits = try store.commits()

        // Five publications in one pass, each a batch of its own; the worker keeps its turn: nothing is sent, and the
        // pass's end saves them together.
        for n in 1...5 { arrive(worker, .publish(Publish(topic: "app.told.\(n)", body: [:])), at: exchange) }
        try exchange.broker.serveOnce()
        XCTAssertEqual(exchange.transport.takeSent(to: listener.identity).count, 0, "the listener waits for the worker's turn to end")
        XCTAssertEqual(try store.commits(), commits + 1, "one save for the pass's five batches")
        XCTAssertEqual(try store.load().savedSeq, exchange.broker.sequencer.lastSeq, "the save covers them all")

        // Three more and the acknowledgement that ends the turn, in one pass: one save, made before the listener's turn.
        commits = try store.commits()
        for n in 6...8 { arrive(worker, .publish(Publish(topic: "app.told.\(n)", body: [:])), at: exchange) }
        let lastTold = exchange.broker.sequencer.lastSeq + 3
        arrive(worker, .ack(seq: worker.lastSeq), at: exchange)
        try exchange.broker.serveOnce()
        XCTAssertEqual(try store.commits(), commits + 1, "one save for the pass's three batches and the turn's end")
        XCTAssertGreaterThanOrEqual(try store.load().savedSeq ?? 0, lastTold, "saved before the first of them was sent")
        XCTAssertEqual(try exchange.turnUntil(listener) { $0.topics.count == 8 }.topics, (1...8).map { "app.told.\($0)" }, "the listener's turn")
    }

    /// A fault test's run (`--crash-before-saving`) saves each batch on its own: which batches a shared save covers
    /// depends on how the passes fell, and the cut at the chosen batch must be the same in every run.
    func testARunWithACrashPointSavesEachBatchOnItsOwn() throws {
        let (exchange, _, worker) = try workerInItsTurn(SteppedExchange(.inMemory, deliveryStore: true, crashPoint: .beforeSaving(topic: "app.never")))
        defer { exchange.finish() }
        let store = try XCTUnwrap(exchange.broker.ledger.store)
        let commits = try store.commits()
        for n in 1...5 { arrive(worker, .publish(Publish(topic: "app.told.\(n)", body: [:])), at: exchange) }
        try exchange.broker.serveOnce()
        XCTAssertEqual(try store.commits(), commits + 5, "a save for each of the pass's five batches")
        XCTAssertEqual(try store.load().savedSeq, exchange.broker.sequencer.lastSeq, "the last of them saved")
    }

    /// A listener of what a worker tells, and the worker in its turn (handling `app.work`, not acknowledged yet).
    private func workerInItsTurn(_ exchange: SteppedExchange) throws -> (SteppedExchange, listener: SteppedExchange.Peer, worker: SteppedExchange.Peer) {
        let listener = try exchange.join("listener", role: .generic, subscriptions: ["app.told."])
        let worker = try exchange.join("worker", role: .generic, subscriptions: ["app.work"])
        let sender = try exchange.join("sender", role: .tool, subscriptions: [])
        try exchange.step(sender, .publish(Publish(topic: "app.work", body: [:])))
        XCTAssertEqual(worker.topics, ["app.work"], "the worker's turn")
        return (exchange, listener, worker)
    }

    /// `peer`'s message waits for the loop's next pass.
    private func arrive(_ peer: SteppedExchange.Peer, _ message: ClientMessage, at exchange: SteppedExchange) {
        exchange.transport.arrive(from: peer.identity, WireCodec.encode(message))
    }
}
