import Foundation
import ShieldBusTestSupport
import SQLite
import XCTest

/// A store's write-ahead log is checkpointed off the committing thread — on the flusher for a shared store, when its
/// owner is idle for an exclusive one — and by the committing thread only past the hard limit, so the log stays
/// bounded while checkpoints can copy it; a checkpoint that fails is said, and nothing is lost.
final class LogCheckpointsTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("log-checkpoints-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A store in WAL mode with a table `t`.
    private func store(_ name: String = "store.sqlite", access: SQLiteConnection.Access = .shared) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path(name), flags: [.readWrite, .create], access: access)
        try connection.enableWAL()
        try connection.execute("CREATE TABLE t (n INTEGER, filler BLOB)")
        return connection
    }

    /// One commit of a row about a page long (one or two frames in the log).
    private func commit(_ connection: SQLiteConnection, _ n: Int) throws {
        try connection.transaction { try connection.execute("INSERT INTO t VALUES (\(n), zeroblob(3000))") }
    }

    private func rows(_ connection: SQLiteConnection) throws -> Int64 {
        try connection.withStatement("SELECT count(*) FROM t") { try $0.step() ? try $0.int64(at: 0) ?? 0 : 0 }
    }

    /// The commit that takes the log past the soft limit does not checkpoint: the flusher does (here held until the
    /// commit has returned), through a connection of its own, and the next commit writes the log again from its start
    /// (the flusher does not start it itself while the owner commits: its commit would make the owner's wait).
    func testTheCheckpointRunsOnTheFlusherNotOnTheCommittingThread() throws {
        let connection = try store()
        let flusher = LogFlusher(label: "test.flusher"), held = DispatchSemaphore(value: 0)
        let checkpoints = LogCheckpoints(connection: connection, flusher: flusher, softLimit: 100, hardLimit: 400)
        XCTAssertEqual(checkpoints.schedule, .background)
        flusher.run { held.wait() }
        var n = 0
        while checkpoints.logFrames < 100, n < 1000 {
            n += 1
            try commit(connection, n)
        }
        XCTAssertGreaterThanOrEqual(checkpoints.logFrames, 100, "each commit says the log's length")
        XCTAssertEqual(checkpoints.counts, LogCheckpoints.Counts(), "the committing thread did not checkpoint: the flusher is held")
        held.signal()
        waitUntil("the flusher checkpointed") { checkpoints.counts.background == 1 }
        try commit(connection, n + 1)
        XCTAssertLessThan(checkpoints.logFrames, 10, "the log was all copied: the next commit wrote it again from its start")
        XCTAssertEqual(checkpoints.counts.committing, 0)
        XCTAssertNil(checkpoints.failure)
        XCTAssertEqual(try rows(connection), Int64(n + 1))
    }

    /// With the flusher held (a background checkpoint that cannot keep up), the commit that takes the log past the hard
    /// limit checkpoints it itself: the log file stays within the hard limit's frames.
    func testACommitPastTheHardLimitCheckpointsItselfWhenTheFlusherCannotKeepUp() throws {
        let connection = try store()
        let flusher = LogFlusher(label: "test.flusher"), held = DispatchSemaphore(value: 0)
        let checkpoints = LogCheckpoints(connection: connection, flusher: flusher, softLimit: 100, hardLimit: 400)
        flusher.run { held.wait() }
        var most = 0
        for n in 1...1000 {
            try commit(connection, n)
            most = max(most, checkpoints.logFrames)
        }
        XCTAssertGreaterThanOrEqual(checkpoints.counts.committing, 2)
        XCTAssertEqual(checkpoints.counts.background, 0)
        XCTAssertLessThan(most, 400 + 3, "no commit left the log past the hard limit by more than its own frames")
        XCTAssertLessThanOrEqual(FileSize.of(path("store.sqlite-wal")) ?? 0, Self.logBytes(frames: 400 + 3))
        held.signal()
        waitUntil("the flusher's checkpoint, asked for at the first soft limit, ran") { checkpoints.counts.background == 1 }
        XCTAssertEqual(try rows(connection), 1000)
    }

    /// Over many commits through a commit tally, with the process's flusher and the real limits, the log never passes
    /// the hard limit, and the flusher does the checkpointing.
    func testAStoresLogStaysUnderTheHardLimitOverManyCommits() throws {
        let connection = try store()
        let tally = try CommitTally(connection: connection, path: path("store.sqlite"))
        var most = 0
        for n in 1...(3 * LogCheckpoints.hardLimit) {
            try tally.transaction { try connection.execute("INSERT INTO t VALUES (\(n), zeroblob(3000))") }
            most = max(most, tally.checkpoints.logFrames)
        }
        // A commit's own frames, and those of one more when it met the flusher's checkpoint just starting.
        XCTAssertLessThan(most, LogCheckpoints.hardLimit + 8)
        XCTAssertLessThanOrEqual(FileSize.of(path("store.sqlite-wal")) ?? 0, Self.logBytes(frames: LogCheckpoints.hardLimit + 8))
        waitUntil("the flusher checkpointed") { tally.checkpoints.counts.background >= 1 }
        XCTAssertNil(tally.noteFailure)
        XCTAssertEqual(try rows(connection), Int64(3 * LogCheckpoints.hardLimit))
    }

    /// A store opened `.exclusive` has no other connection: its log waits for the owner's idle moment
    /// (`checkpointIfOwed`, which also starts the copied log again, so the next commit does not flush its header), and
    /// past the hard limit the commit checkpoints it.
    func testAnExclusiveStoreIsCheckpointedWhenIdleAndPastTheHardLimit() throws {
        let connection = try store(access: .exclusive)
        let checkpoints = LogCheckpoints(connection: connection, softLimit: 100, hardLimit: 400)
        XCTAssertEqual(checkpoints.schedule, .whenIdle)
        XCTAssertFalse(checkpoints.checkpointIfOwed(), "nothing owed yet")
        var n = 0
        while checkpoints.logFrames < 100, n < 1000 {
            n += 1
            try commit(connection, n)
        }
        XCTAssertTrue(checkpoints.owesCheckpoint())
        try commit(connection, n + 1)
        XCTAssertEqual(checkpoints.counts, LogCheckpoints.Counts(), "owed, not run by the commits")
        XCTAssertTrue(checkpoints.checkpointIfOwed())
        XCTAssertEqual(checkpoints.counts.whenIdle, 1)
        XCTAssertEqual(checkpoints.logFrames, 1, "the log copied whole and started again while idle, by a one-frame commit")
        XCTAssertFalse(checkpoints.owesCheckpoint())
        var most = 0
        for m in n + 2...n + 1000 {
            try commit(connection, m)
            most = max(most, checkpoints.logFrames)
        }
        XCTAssertGreaterThanOrEqual(checkpoints.counts.committing, 2, "never idle: the hard limit holds the log")
        XCTAssertLessThan(most, 400 + 3)
        XCTAssertEqual(try rows(connection), Int64(n + 1000))
        XCTAssertNil(checkpoints.failure)
    }

    /// A background checkpoint that fails — here the store's file moved away, so the flusher's connection cannot open
    /// it — is said once on the committing thread, naming the store; the commits stand in the log; a second on, with
    /// the file back, it is tried again and succeeds.
    func testAFailingCheckpointIsSaidOnceAndTriedAgainLosingNothing() throws {
        var clock: TimeInterval = 100
        let connection = try store(), store = path("store.sqlite"), flusher = LogFlusher(label: "test.flusher")
        let followUp = CommitFollowUp(path: store, checkpointing: connection, flusher: flusher, now: { clock })
        var said: [String] = []
        followUp.onFailure = { said.append($0) }
        let checkpoints = try XCTUnwrap(followUp.checkpoints)
        try FileManager.default.moveItem(atPath: store, toPath: store + ".moved")
        var n: Int64 = 0
        func commitAndFollow() throws {
            n += 1
            try commit(connection, Int(n))
            followUp.committed(through: n, after: n - 1)
        }
        while checkpoints.logFrames < LogCheckpoints.softLimit, n < 10_000 { try commitAndFollow() }
        waitUntil("the checkpoint failed") { followUp.failure != nil }
        for _ in 0..<3 { try commitAndFollow() }
        XCTAssertEqual(said.count, 1, "\(said)")
        XCTAssertTrue(said.first?.hasPrefix("\(store): cannot copy its write-ahead log into the file (a checkpoint): ") == true, "\(said)")
        XCTAssertTrue(said.first?.hasSuffix("its commits stand in the log, which grows until this is fixed") == true, "\(said)")
        XCTAssertEqual(checkpoints.counts.background, 0)
        try FileManager.default.moveItem(atPath: store + ".moved", toPath: store)
        try commitAndFollow()
        XCTAssertNotNil(followUp.failure, "within a second of the failure: not tried again")
        clock += 1
        try commitAndFollow()
        waitUntil("tried again a second on, and done") { checkpoints.counts.background == 1 && followUp.failure == nil }
        try commitAndFollow()
        XCTAssertLessThan(checkpoints.logFrames, 10)
        XCTAssertEqual(said.count, 1)
        XCTAssertEqual(try rows(connection), n)
    }

    /// The bytes of a log of `frames` pages: its header, and each frame's header and page.
    private static func logBytes(frames: Int, pageSize: Int64 = 4096) -> Int64 { 32 + Int64(frames) * (24 + pageSize) }
}
