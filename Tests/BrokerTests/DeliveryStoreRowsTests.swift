// DeliveryStoreRowsTests: `bus.sqlite`'s kept events as numbered rows — a save writes the pages it changes and no more, and rows outlive their broker.

@testable import Broker
import SQLite
import ShieldBusTestSupport
import XCTest

final class DeliveryStoreRowsTests: XCTestCase {
    /// A shielded open keeps `shield.shown` (an envelope longer than a quarter of a page) for two plugins, and the next
    /// open's save forgets it: each of those saves writes two pages to the log, the kept rows' and the tally's —
    /// no overflow page for either copy, and so neither the file's first page nor its list of free pages.
    func testKeepingAndForgettingAnEnvelopeLongerThanAQuarterPageWritesTwoPages() throws {
        let directory = TemporaryDirectory(prefix: "sbrows")
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path + "/bus.sqlite"
        let store = try DeliveryStore(path: path)
        func frames(_ save: () throws -> Void) throws -> Int {
            func logBytes() -> Int { (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0 }
            let before = logBytes()
            try save()
            let written = logBytes() - before
            XCTAssertEqual(written % (DeliveryStore.pageSize + 24), 0, "whole frames (a first commit's header excepted: none here)")
            return written / (DeliveryStore.pageSize + 24)
        }
        let request = [UInt8](repeating: UInt8(ascii: "r"), count: 370), shown = [UInt8](repeating: UInt8(ascii: "s"), count: 700)
        XCTAssertGreaterThan(shown.count, (DeliveryStore.pageSize - 12) * 64 / 255 - 23, "longer than a key's tree keeps in its page")
        var seq: UInt64 = 0
        // The log's header and the tables' first pages come with the first save.
        try store.write(inserts: [:], deletions: [], savedSeq: 0, seqReserved: 1_000, timeReserved: 0)
        var lastShown: UInt64?
        for _ in 0..<20 {
            seq += 1
            let asked = DeliveryStore.Key(plugin: "shield", seq: seq)
            let forgotten = lastShown.map { [DeliveryStore.Key(plugin: "notifier", seq: $0), DeliveryStore.Key(plugin: "reports", seq: $0)] } ?? []
            XCTAssertEqual(try frames { try store.write(inserts: [asked: request], deletions: forgotten, savedSeq: seq, seqReserved: 1_000, timeReserved: 0) }, 2)
            seq += 1
            let kept = [DeliveryStore.Key(plugin: "notifier", seq: seq): shown, DeliveryStore.Key(plugin: "reports", seq: seq): shown]
            XCTAssertEqual(try frames { try store.write(inserts: kept, deletions: [asked], savedSeq: seq, seqReserved: 1_000, timeReserved: 0) }, 2)
            lastShown = seq
        }
        XCTAssertEqual(try store.load().pending.map(\.seq), [seq, seq])
    }

    /// Rows kept by one broker are forgotten by the next (which numbers its own after them), a key kept again keeps
    /// one row, and a store is read back in plugin and sequence order whatever order the rows were numbered in.
    func testRowsKeptByOneBrokerAreForgottenByTheNext() throws {
        let directory = TemporaryDirectory(prefix: "sbrows")
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path + "/bus.sqlite"
        func key(_ plugin: String, _ seq: UInt64) -> DeliveryStore.Key { DeliveryStore.Key(plugin: plugin, seq: seq) }
        func json(_ seq: UInt64) -> [UInt8] { Array(#"{"seq":\#(seq)}"#.utf8) }
        do {
            let first = try DeliveryStore(path: path)
            try first.write(inserts: [key("monitor", 2): json(2), key("app", 1): json(1), key("app", 2): json(2)], deletions: [],
                            savedSeq: 2, seqReserved: 1_000, timeReserved: 0)
            try first.write(inserts: [key("app", 2): json(2)], deletions: [], savedSeq: 2, seqReserved: 1_000, timeReserved: 0)
        }
        do {
            let next = try DeliveryStore(path: path)
            let snapshot = try next.load()
            XCTAssertEqual(snapshot.pending.map { "\($0.plugin) \($0.seq)" }, ["app 1", "app 2", "monitor 2"], "one row a key, in order")
            try next.write(inserts: [key("app", 3): json(3)], deletions: [key("app", 1), key("monitor", 2)], savedSeq: 3, seqReserved: 1_000, timeReserved: 0)
        }
        let file = try SQLiteConnection(path: path)
        let rows = try file.prepare("SELECT plugin, seq FROM pending ORDER BY row")
        var left: [String] = []
        while try rows.step() { left.append("\(try XCTUnwrap(try rows.string(at: 0))) \(try XCTUnwrap(try rows.int64(at: 1)))") }
        XCTAssertEqual(left, ["app 2", "app 3"], "the next broker's row after the first's")
    }

    /// A key kept and forgotten in one save leaves no row (its row is the one that save numbered); a key kept twice by a
    /// broker from before (two rows: the table has no index on the key) is restored once, from its last row, and its
    /// other row is gone from the file.
    func testAKeyKeptAndForgottenInOneSaveOrKeptInTwoRowsIsRestoredAtMostOnce() throws {
        let directory = TemporaryDirectory(prefix: "sbrows")
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path + "/bus.sqlite"
        func key(_ plugin: String, _ seq: UInt64) -> DeliveryStore.Key { DeliveryStore.Key(plugin: plugin, seq: seq) }
        do {
            let store = try DeliveryStore(path: path)
            try store.write(inserts: [key("app", 1): Array("one".utf8), key("app", 2): Array("two".utf8)], deletions: [key("app", 1)],
                            savedSeq: 2, seqReserved: 1_000, timeReserved: 0)
            XCTAssertEqual(try store.load().pending.map(\.seq), [2], "the key forgotten in the save that kept it")
        }
        do {
            // What a broker from before writes when it keeps a key it kept already.
            let file = try SQLiteConnection(path: path)
            try file.execute("INSERT INTO pending (plugin, seq, envelope) VALUES ('app', 2, x'74776f2d616761696e')")
        }
        do {
            let reopened = try DeliveryStore(path: path)
            let pending = try reopened.load().pending
            XCTAssertEqual(pending.map(\.seq), [2], "restored once")
            XCTAssertEqual(pending.map { String(decoding: $0.json, as: UTF8.self) }, ["two-again"], "from its last row")
            try reopened.write(inserts: [:], deletions: [key("app", 2)], savedSeq: 2, seqReserved: 1_000, timeReserved: 0)
        }
        XCTAssertEqual(try DeliveryStore(path: path).load().pending.count, 0, "no row left behind")
    }
}
