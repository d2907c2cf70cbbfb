import BusClient
import BusProtocol
import Configuration
import Foundation
import SQLite
import ShieldBusTestSupport
@testable import ShieldBusSDK
import XCTest

/// The SDK's record of handled events (`cursors/<plugin>/handled.sqlite`): what an earlier process handled is found by the
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

    /// A supervised plugin's record is made in its folder, which the first launch makes and later ones find; a file
    /// where the folder should be is refused (the folder is asked for by `lstat` before `FileManager` makes it).
    func testTheRecordsFolderIsMadeOnceAndAFileInItsPlaceIsRefused() throws {
        let environment = ["SHIELDBUS_SUPERVISED": "1", "SHIELDBUS_STATE_DIR": folder!]
        let recordFolder = folder + "/" + StateFolder.cursorFolder(plugin: "monitor")
        XCTAssertFalse(FileManager.default.fileExists(atPath: recordFolder))
        let first = try XCTUnwrap(HandledEvents.forSupervisedPlugin(named: "monitor", environment: environment))
        try first.record(7, publications: [])
        XCTAssertTrue(StoreFiles.isFolder(recordFolder))
        let next = try XCTUnwrap(HandledEvents.forSupervisedPlugin(named: "monitor", environment: environment))
        XCTAssertTrue(try next.contains(7))
        let blocked = folder + "/" + StateFolder.cursorFolder(plugin: "shield")
        try FileManager.default.createDirectory(atPath: (blocked as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: blocked, contents: Data("not a folder".utf8)))
        XCTAssertThrowsError(try HandledEvents.forSupervisedPlugin(named: "shield", environment: environment))
        XCTAssertEqual(FileManager.default.contents(atPath: blocked), Data("not a folder".utf8), "the file in the folder's place was changed")
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

    /// A short-lived extension's process hands its record over with the log copied into the file and emptied: the next
    /// process finds no log to read back, and every record and publication still there.
    func testARecordHandedOverKeepsEverythingWithAnEmptyLog() throws {
        let path = folder + "/handed.sqlite"
        let handled = try HandledEvents(path: path)
        for seq in UInt64(1)...30 { try handled.record(seq, publications: [Publish(topic: "x.test.made", body: ["seq": .int(Int64(seq))])]) }
        XCTAssertGreaterThan(FileSize.of(path + "-wal") ?? 0, 0, "the records are in the log before the hand-over")
        handled.handOver()
        XCTAssertEqual(FileSize.of(path + "-wal"), 0)
        let next = try HandledEvents(path: path)
        for seq in UInt64(1)...30 {
            XCTAssertTrue(try next.contains(seq), "seq \(seq)")
            XCTAssertEqual(try next.publications(of: seq).map(\.topic), ["x.test.made"], "seq \(seq)")
        }
        XCTAssertFalse(try next.contains(31))
        try next.record(31)
        XCTAssertTrue(try HandledEvents(path: path).contains(31))

        // A short log (one launch's record) is left for the next process to read back, and nothing is lost.
        let short = folder + "/short.sqlite"
        let once = try HandledEvents(path: short)
        try once.record(7)
        let logged = FileSize.of(short + "-wal") ?? 0
        XCTAssertGreaterThan(logged, 0)
        XCTAssertLessThan(logged, HandledEvents.handOverLogBytes)
        once.handOver()
        XCTAssertEqual(FileSize.of(short + "-wal"), logged, "left as it was")
        XCTAssertTrue(try HandledEvents(path: short).contains(7))
    }

    /// The look-up and the record in one write transaction: an event not recorded is handled once and recorded with
    /// what it published; one recorded is not handled again; a handling left unrecorded commits nothing. Each commit
    /// is counted and noted as before, so the next process opens the record (a lost log would still be refused).
    func testHandlingOnceLooksUpHandlesAndRecordsInOneTransaction() throws {
        let path = folder + "/once.sqlite"
        let handled = try HandledEvents(path: path)
        var calls = 0, ran = false
        XCTAssertEqual(try handled.handleOnce(5, ran: &ran) {
            calls += 1
            return [Publish(topic: "x.test.made", body: ["seq": 5])]
        }, .recorded)
        XCTAssertTrue(ran)
        XCTAssertEqual(calls, 1)
        ran = false
        XCTAssertEqual(try handled.handleOnce(5, ran: &ran) {
            calls += 1
            return []
        }, .alreadyHandled)
        XCTAssertFalse(ran)
        XCTAssertEqual(calls, 1, "a recorded event is not handled again")
        XCTAssertEqual(try handled.handleOnce(6, ran: &ran) { nil }, .unrecorded)
        XCTAssertTrue(ran)
        XCTAssertFalse(try handled.contains(6))
        XCTAssertEqual(try CommitNote.read(besides: path), 1, "only the recording transaction was counted and noted")

        let next = try HandledEvents(path: path)
        XCTAssertEqual(try next.publications(of: 5).map(\.topic), ["x.test.made"])
        XCTAssertEqual(try next.handleOnce(6, ran: &ran) { [] }, .recorded)
        XCTAssertTrue(try HandledEvents(path: path).contains(6))
        XCTAssertEqual(try CommitNote.read(besides: path), 2)
    }

    /// A process killed before handing its record over (a force-quit app) leaves its long log to the next process,
    /// whose flusher copies it into the file once the process has read it back, and starts the log again (the flush of
    /// its new header off the process's own thread): the next record is written from the log's start, so the process
    /// after it reads back only that, and nothing is lost.
    func testARecordOpenedWithALongLogHasItCopiedIntoTheFileOnTheFlusher() throws {
        let path = folder + "/killed.sqlite"
        let killed = try HandledEvents(path: path)
        for seq in UInt64(1)...30 { try killed.record(seq) }
        let framesInLog = { try SQLiteConnection(path: path).withStatement("PRAGMA wal_checkpoint(PASSIVE)") { try $0.step() ? try $0.int64(at: 1) : nil } }
        XCTAssertGreaterThanOrEqual(FileSize.of(path + "-wal") ?? 0, HandledEvents.handOverLogBytes)
        let next = try HandledEvents(path: path)
        XCTAssertTrue(waitUntil("the flusher's checkpoint") { next.checkpoints.counts.background == 1 })
        XCTAssertEqual(next.checkpoints.counts, LogCheckpoints.Counts(background: 1), "copied on the flusher, not by the opening thread")
        XCTAssertEqual(try framesInLog(), 1, "the log started again by the flusher: one frame, the rewritten version")
        try next.record(31)
        XCTAssertLessThanOrEqual(try framesInLog() ?? .max, 3, "the log written again from its start")
        let last = try HandledEvents(path: path)
        for seq in UInt64(1)...31 { XCTAssertTrue(try last.contains(seq), "seq \(seq)") }
        XCTAssertFalse(try last.contains(32))
        _ = killed
    }

    /// A hand-over at a short-lived extension's end that meets the copy its open started on the flusher (still running
    /// on a slow disk) waits for it, and still leaves the log empty for the next process.
    func testAHandOverWaitsForTheCopyStartedAtOpen() throws {
        let path = folder + "/short.sqlite"
        let killed = try HandledEvents(path: path)
        for seq in UInt64(1)...30 { try killed.record(seq) }
        XCTAssertGreaterThanOrEqual(FileSize.of(path + "-wal") ?? 0, HandledEvents.handOverLogBytes)
        let held = DispatchSemaphore(value: 0)
        LogFlusher.shared.run { held.wait() }
        let next = try HandledEvents(path: path)
        for seq in UInt64(31)...60 { try next.record(seq) }
        let handedOver = DispatchSemaphore(value: 0)
        // Used by that thread alone until it signals.
        let handing = UncheckedSendable(next)
        DispatchQueue.global().async {
            handing.value.handOver()
            handedOver.signal()
        }
        XCTAssertEqual(handedOver.wait(timeout: .now() + 0.2), .timedOut, "the hand-over waits for the copy asked of the held flusher")
        held.signal()
        XCTAssertEqual(handedOver.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(FileSize.of(path + "-wal"), 0, "the log emptied for the next process")
        XCTAssertEqual(next.checkpoints.counts.background, 1)
        let last = try HandledEvents(path: path)
        for seq in UInt64(1)...60 { XCTAssertTrue(try last.contains(seq), "seq \(seq)") }
        _ = killed
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

/// A value handed to one other thread, which alone uses it until it says so.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
