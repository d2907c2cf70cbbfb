import Foundation
import SQLite
import XCTest

/// A store that lost committed writes with its write-ahead log — deleted, zeroed, cut, a byte flipped — is caught by
/// its commit tally at the next open; one that lost nothing opens. Copies of the file taken while a connection
/// holds the log stand for the store after the loss.
final class CommitTallyTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("commit-tally-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A store with three counted writes, the last two in its log only; the connection stays open.
    private func storeWithWritesInItsLog() throws -> (SQLiteConnection, String) {
        let store = path("store.sqlite")
        let connection = try SQLiteConnection(path: store, flags: [.readWrite, .create])
        try connection.enableWAL()
        try connection.execute("CREATE TABLE t (n INTEGER)")
        let tally = try CommitTally(connection: connection, path: store)
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (1)") }
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for n in 2...3 { try tally.transaction { try connection.execute("INSERT INTO t VALUES (\(n))") } }
        return (connection, store)
    }

    func testAStoreThatLostCommittedWritesWithItsLogIsRefused() throws {
        let (connection, store) = try storeWithWritesInItsLog()
        let wal = try Data(contentsOf: URL(fileURLWithPath: store + "-wal"))
        XCTAssertEqual(CommitNote.read(besides: store), 3)
        let losses: [(String, Data?)] = [("deleted", nil), ("zeroed", Data(count: wal.count)), ("cut", wal.prefix(wal.count - 1)),
                                        ("header flipped", { var bytes = wal; bytes[20] ^= 0x5A; return bytes }())]
        for (index, (loss, log)) in losses.enumerated() {
            let copy = path("copy\(index).sqlite")
            try FileManager.default.copyItem(atPath: store, toPath: copy)
            try FileManager.default.copyItem(atPath: store + "-committed", toPath: copy + "-committed")
            try log?.write(to: URL(fileURLWithPath: copy + "-wal"))
            let opened = try SQLiteConnection(path: copy, flags: [.readWrite])
            XCTAssertThrowsError(try CommitTally(connection: opened, path: copy), loss) { error in
                guard let lost = error as? LostCommits else { return XCTFail("\(loss): \(error)") }
                XCTAssertEqual(lost.noted, 3, loss)
                XCTAssertLessThan(lost.stored, 3, loss)
                XCTAssertTrue(lost.description.contains("write-ahead log (copy\(index).sqlite-wal) was deleted or damaged"), lost.description)
            }
        }
        // The store itself, with its log, holds every write.
        let again = try SQLiteConnection(path: store, flags: [.readWrite])
        XCTAssertNoThrow(try CommitTally(connection: again, path: store))
        withExtendedLifetime(connection) {}
    }

    func testAStoreWithoutANoteOrWithEverythingCheckpointedOpens() throws {
        let (connection, store) = try storeWithWritesInItsLog()
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let copy = path("checkpointed.sqlite")
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        try FileManager.default.copyItem(atPath: store + "-committed", toPath: copy + "-committed")
        XCTAssertNoThrow(try CommitTally(connection: SQLiteConnection(path: copy, flags: [.readWrite]), path: copy), "the log held nothing: nothing was lost")
        let unnoted = path("unnoted.sqlite")
        try FileManager.default.copyItem(atPath: store, toPath: unnoted)
        XCTAssertNoThrow(try CommitTally(connection: SQLiteConnection(path: unnoted, flags: [.readWrite]), path: unnoted), "no note says nothing")
        // A failed write is not counted: the note stays where the file is.
        let tally = try CommitTally(connection: connection, path: store)
        XCTAssertThrowsError(try tally.transaction { try connection.execute("INSERT INTO missing VALUES (1)") })
        XCTAssertEqual(CommitNote.read(besides: store), 3)
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (4)") }
        XCTAssertEqual(CommitNote.read(besides: store), 4)
    }
}
