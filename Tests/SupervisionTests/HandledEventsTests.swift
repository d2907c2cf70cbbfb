import BusProtocol
import Configuration
import Foundation
import SQLite
@testable import ShieldBusSDK
import XCTest

/// The SDK's record of handled events (`cursors/<plugin>.sqlite`): what an earlier process handled is found by the
/// next, in any order of arrival.
final class HandledEventsTests: XCTestCase {
    private var folder: String!

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "/sbhandled-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    /// Seeded runs of processes, each handling events in a shuffled order (an older event can arrive after a newer
    /// reply), some of them redelivered: an event is found handled exactly when some process recorded it, with what
    /// handling it published.
    func testWhatAnyProcessRecordedIsFoundAndNothingElse() throws {
        for seed in UInt64(1)...20 {
            var random = SeededRandom(seed: seed)
            let path = folder + "/cursor-\(seed).sqlite"
            var recorded: Set<UInt64> = []
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let handled = try HandledEvents(path: path)
                let arriving = (1...60).map { _ in UInt64.random(in: 1...80, using: &random) }
                for seq in arriving {
                    XCTAssertEqual(try handled.contains(seq), recorded.contains(seq), "seed \(seed), seq \(seq)")
                    guard !recorded.contains(seq), Bool.random(using: &random) else { continue }
                    try handled.record(seq, publications: [Publish(topic: "x.test.made", body: ["seq": .int(Int64(seq))])])
                    recorded.insert(seq)
                }
            }
            let last = try HandledEvents(path: path)
            for seq in recorded {
                XCTAssertEqual(try last.publications(of: seq).map(\.topic), ["x.test.made"], "seed \(seed), seq \(seq)")
            }
        }
    }

    /// A process that records alone answers look-ups of newer events from memory. One started while another still
    /// holds the record (a process orphaned by a killed broker, still ending) reads the file — finding what the other
    /// records meanwhile — until the other is gone, and then records alone; the other, seeing a commit it did not
    /// make, reads the file from then on. Kept in memory past its bound, what was recorded is read from the file.
    func testAProcessBesideAnotherReadsTheFileUntilTheOtherIsGone() throws {
        let path = folder + "/shared.sqlite"
        var first: HandledEvents? = try HandledEvents(path: path, recordedAloneLimit: 3)
        try first?.record(3)
        XCTAssertEqual(first?.recordsAlone, true)
        let second = try HandledEvents(path: path)
        XCTAssertFalse(second.recordsAlone, "another process holds the record")
        try first?.record(5)
        XCTAssertEqual(try [3, 4, 5].map { try second.contains($0) }, [true, false, true])
        try second.record(4)
        try first?.record(6)
        XCTAssertEqual(first?.recordsAlone, false, "a commit it did not make was seen")
        XCTAssertEqual(try first?.contains(4), true)
        first = nil
        XCTAssertEqual(try [6, 7].map { try second.contains($0) }, [true, false])
        XCTAssertTrue(second.recordsAlone, "the other is gone")
        for seq: UInt64 in [9, 7, 8, 10, 12] { try second.record(seq) }
        XCTAssertEqual(try (3...13).map { try second.contains($0) }, [true, true, true, true, true, true, true, true, false, true, false])

        let bounded = folder + "/bounded.sqlite"
        let alone = try HandledEvents(path: bounded, recordedAloneLimit: 3)
        for seq: UInt64 in [2, 4, 6, 8, 10] { try alone.record(seq) }
        XCTAssertTrue(alone.recordsAlone)
        XCTAssertEqual(try (1...11).map { try alone.contains($0) }, (1...11).map { $0 % 2 == 0 && $0 <= 10 })
    }

    /// The schema is made once, with the file: a later open finds its version and runs no schema statement; a record
    /// made before the version was kept is taken as it is (its rows stay) and gets the version.
    func testTheSchemaIsMadeOnceAndAnOlderRecordKeepsItsRows() throws {
        let path = folder + "/new.sqlite"
        try HandledEvents(path: path).record(7)
        let made = try SQLiteConnection(path: path)
        XCTAssertEqual(try made.userVersion(), HandledEvents.formatVersion)
        XCTAssertEqual(try made.withStatement("PRAGMA journal_mode") { try $0.step() ? try $0.string(at: 0) : nil }, "wal")
        XCTAssertTrue(try HandledEvents(path: path).contains(7))

        let older = folder + "/older.sqlite"
        let before = try SQLiteConnection(path: older)
        try before.execute("""
            CREATE TABLE handled (seq INTEGER PRIMARY KEY);
            CREATE TABLE published (seq INTEGER NOT NULL, idx INTEGER NOT NULL, message BLOB NOT NULL, PRIMARY KEY (seq, idx)) WITHOUT ROWID;
            INSERT INTO handled (seq) VALUES (41);
            """)
        XCTAssertTrue(try HandledEvents(path: older).contains(41))
        XCTAssertEqual(try before.userVersion(), HandledEvents.formatVersion)
    }

    func testARecordOfANewerFormatIsRefusedUntouched() throws {
        let path = folder + "/newer.sqlite"
        try SQLiteConnection(path: path).execute("CREATE TABLE other (x); PRAGMA user_version = 9")
        XCTAssertThrowsError(try HandledEvents(path: path)) { error in
            XCTAssertTrue("\(error)".contains("records format 9, newer than this plugin's 1"), "\(error)")
        }
        XCTAssertEqual(try SQLiteConnection(path: path).withStatement("SELECT count(*) FROM sqlite_master WHERE name = 'handled'") { try $0.step() ? try $0.int64(at: 0) : nil }, 0)
    }
}
