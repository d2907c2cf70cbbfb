import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// No sequence number is given twice, whatever the disk under `bus.sqlite` does: on a full disk the broker stops
/// numbering after the last reservation it wrote and says so; killed then and started again on the same state
/// folder, it numbers on past everything it handed out. The disk is a real small tmpfs (root only).
final class NumberingTests: XCTestCase {
    func testAFullDiskStopsNumberingAtTheReservationAndAKilledBrokersSuccessorGivesNoNumberTwice() throws {
        let disk = try SmallDisk(size: "8m")
        let state = disk.path + "/state"
        let first = try BrokerProcess(configuration: "name: numbering\n", arguments: ["--state-dir", state])
        let tap = try first.connect(name: "watcher", role: .tap, subscriptions: ["app."])
        let writer = try first.connect(name: "writer", role: .tool, subscriptions: [])
        try publish(writer, 0..<10)
        var seen = try collectEvents(from: tap) { $0.count == 10 }.map(\.seq)
        XCTAssertEqual(seen.count, 10, "the bus numbers while the disk has room")

        // The disk fills up: the store's next reservation cannot be written.
        try disk.fill()
        try publish(writer, 10..<1_210)
        waitUntil("the broker to say numbering stopped") { first.log(tail: 400).contains("numbering stopped after seq") }
        let stoppedAt = try XCTUnwrap(first.status()["broker"]?["seq"]?.intValue)
        seen += try collectEvents(from: tap, timeoutSeconds: 5) { $0.last?.seq == UInt64(stoppedAt) }.map(\.seq)
        XCTAssertLessThan(seen.count, 1_210, "numbering stopped at the reservation instead of numbering everything")
        XCTAssertEqual(seen, seen.sorted(), "in order")
        XCTAssertEqual(try first.status()["broker"]?["seq"]?.intValue, stoppedAt, "and stays stopped while the disk is full")

        // Killed while stopped; the disk has room again; its successor numbers on past everything handed out.
        first.stop(signal: SIGKILL)
        try disk.free()
        let second = try BrokerProcess(configuration: "name: numbering\n", arguments: ["--state-dir", state])
        defer { second.stop() }
        let tapAfter = try second.connect(name: "watcher", role: .tap, subscriptions: ["app."])
        let writerAfter = try second.connect(name: "writer", role: .tool, subscriptions: [])
        try publish(writerAfter, 2_000..<2_001)
        let after = try collectEvents(from: tapAfter) { !$0.isEmpty }
        XCTAssertEqual(after.count, 1)
        XCTAssertGreaterThan(after.first?.seq ?? 0, UInt64(stoppedAt), "no number handed out before the crash is given again")
        XCTAssertGreaterThan(after.first?.seq ?? 0, seen.max() ?? 0)
    }

    /// Given room again without a crash, the broker numbers what waited, in order, and loses none of it.
    func testWhatWaitedForNumberingIsNumberedInOrderWhenTheDiskHasRoomAgain() throws {
        let disk = try SmallDisk(size: "8m")
        let broker = try BrokerProcess(configuration: "name: numbering\n", arguments: ["--state-dir", disk.path + "/state"])
        defer { broker.stop() }
        let tap = try broker.connect(name: "watcher", role: .tap, subscriptions: ["app."])
        let writer = try broker.connect(name: "writer", role: .tool, subscriptions: [])
        try disk.fill()
        try publish(writer, 0..<1_500)
        waitUntil("the broker to say numbering stopped") { broker.log(tail: 400).contains("numbering stopped after seq") }
        try disk.free()
        let events = try collectEvents(from: tap, timeoutSeconds: 30) { $0.count == 1_500 }
        XCTAssertEqual(events.compactMap { $0.bodyValue["n"]?.intValue }, Array(0..<1_500), "every publication, in order")
        XCTAssertEqual(events.map(\.seq), events.map(\.seq).sorted())
        XCTAssertEqual(Set(events.map(\.seq)).count, events.count, "no number twice")
    }

    private func publish(_ writer: BusConnection, _ numbers: Range<Int>) throws {
        for n in numbers { try writer.publish(Publish(topic: "app.numbering.n", body: ["n": .int(Int64(n))])) }
    }
}
