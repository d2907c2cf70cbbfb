// Tests of starting a store's empty write-ahead log at open: the log begun, nothing the store holds changed, a log with
// frames or a store not in WAL mode left alone.
import Foundation
import SQLite
import XCTest

final class LogStartTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("log-start-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func sum(_ connection: SQLiteConnection) throws -> Int64? {
        try connection.withStatement("SELECT sum(v) FROM t") { try $0.step() ? try $0.int64(at: 0) : nil }
    }

    /// A store with an empty log gets its log begun (a header and one frame) and keeps its version, rows and count of
    /// commits; the next commit goes on in that log, and another process reads the store as it was.
    func testAnEmptyLogIsStartedWithoutChangingWhatTheStoreHolds() throws {
        let store = path("empty.sqlite")
        XCTAssertTrue(try StoreCreation.makeIfMissing(at: store, schema: "CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (4); PRAGMA user_version = 3;"))
        let connection = try SQLiteConnection(path: store, flags: [.readWrite])
        let tally = try CommitTally(connection: connection, path: store)
        XCTAssertEqual(try sum(connection), 4)
        XCTAssertEqual(FileSize.of(store + "-wal"), 0, "a made store's log is empty")
        try connection.startEmptyLog()
        let started = FileSize.of(store + "-wal") ?? 0
        XCTAssertGreaterThan(started, 0, "the log's header and a frame written")
        XCTAssertEqual(try connection.userVersion(), 3)
        XCTAssertEqual(try tally.count(), 0, "the start is no counted commit")
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (5)") }
        XCTAssertGreaterThan(FileSize.of(store + "-wal") ?? 0, started, "the next commit goes on in the same log")
        let other = try SQLiteConnection(path: store, flags: [.readWrite])
        XCTAssertEqual(try sum(other), 9)
        XCTAssertEqual(try other.userVersion(), 3)
    }

    /// A log that already holds frames is not touched; nor is a store in rollback-journal mode, which gets no log.
    func testALogWithFramesAndAStoreWithoutALogAreLeftAlone() throws {
        let logged = path("logged.sqlite")
        XCTAssertTrue(try StoreCreation.makeIfMissing(at: logged, schema: "CREATE TABLE t (v INTEGER);"))
        let connection = try SQLiteConnection(path: logged, flags: [.readWrite])
        try connection.execute("INSERT INTO t VALUES (1)")
        let size = FileSize.of(logged + "-wal")
        XCTAssertGreaterThan(size ?? 0, 0)
        try connection.startEmptyLog()
        XCTAssertEqual(FileSize.of(logged + "-wal"), size)

        let rollback = path("rollback.sqlite")
        let plain = try SQLiteConnection(path: rollback)
        try plain.execute("CREATE TABLE t (v INTEGER); PRAGMA user_version = 2")
        try plain.startEmptyLog()
        XCTAssertNil(FileSize.of(rollback + "-wal"))
        XCTAssertEqual(try plain.userVersion(), 2)
    }
    /// A store whose write lock another process holds is left to that process's commit: the start does not wait for
    /// the lock (it would delay a plugin's hello by up to the busy timeout), and the connection waits as before after it.
    func testAStoreAnotherConnectionIsWritingIsLeftWithoutWaiting() throws {
        let store = path("held.sqlite")
        XCTAssertTrue(try StoreCreation.makeIfMissing(at: store, schema: "CREATE TABLE t (v INTEGER);"))
        let writer = try SQLiteConnection(path: store, flags: [.readWrite])
        try writer.execute("BEGIN IMMEDIATE")
        let connection = try SQLiteConnection(path: store, flags: [.readWrite], busyTimeout: 30)
        XCTAssertNoThrow(try connection.startEmptyLog(), "a held lock is no failure of the start")
        XCTAssertEqual(FileSize.of(store + "-wal"), 0, "nothing written past the writer's lock")
        XCTAssertEqual(connection.busyTimeout, 30, "the connection's own wait is back")
        try writer.execute("ROLLBACK")
        try connection.startEmptyLog()
        XCTAssertGreaterThan(FileSize.of(store + "-wal") ?? 0, 0, "started once the lock is free")
    }
}
