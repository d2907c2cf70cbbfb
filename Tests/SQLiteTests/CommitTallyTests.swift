import Foundation
import ShieldBusTestSupport
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

    /// A tally opened on a connection that read the store's schema before another connection made the tally's table
    /// (another process's first counted write) reads the count from the file, not 0 from the schema it held: the
    /// store is sound and is not refused.
    func testATallyMadeByAnotherConnectionAfterThisOneReadTheSchemaIsCounted() throws {
        let store = path("store.sqlite")
        let first = try SQLiteConnection(path: store, flags: [.readWrite, .create])
        try first.enableWAL()
        try first.execute("CREATE TABLE t (n INTEGER)")
        XCTAssertFalse(try first.schemaHoldsTable("commit_tally"))
        let other = try SQLiteConnection(path: store, flags: [.readWrite])
        let otherTally = try CommitTally(connection: other, path: store)
        for n in 1...2 { try otherTally.transaction { try other.execute("INSERT INTO t VALUES (\(n))") } }
        XCTAssertEqual(try CommitNote.read(besides: store), 2)
        XCTAssertFalse(try first.schemaHoldsTable("commit_tally"), "the schema first read holds no tally")
        let tally = try CommitTally(connection: first, path: store)
        XCTAssertEqual(try tally.count(), 2)
        try tally.transaction { try first.execute("INSERT INTO t VALUES (3)") }
        XCTAssertEqual(try CommitNote.read(besides: store), 3)
    }

    func testAStoreThatLostCommittedWritesWithItsLogIsRefused() throws {
        let (connection, store) = try storeWithWritesInItsLog()
        let wal = try Data(contentsOf: URL(fileURLWithPath: store + "-wal"))
        XCTAssertEqual(try CommitNote.read(besides: store), 3)
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
        XCTAssertEqual(try CommitNote.read(besides: store), 3)
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (4)") }
        XCTAssertEqual(try CommitNote.read(besides: store), 4)
    }

    /// Two writers of one store, each with its own connection and tally, take turns: each counts on from the file
    /// under its write lock, never from what it counted itself, so the file's count and the note stay together and
    /// the store opens. (Counted in memory, the second writer wrote 1 over the first's 3 — a sound store refused.)
    func testTwoWritersOfOneStoreCountOnFromTheFile() throws {
        let store = path("shared.sqlite")
        let first = try SQLiteConnection(path: store, flags: [.readWrite, .create])
        try first.enableWAL()
        try first.execute("CREATE TABLE t (n INTEGER)")
        let second = try SQLiteConnection(path: store, flags: [.readWrite])
        let tallies = [try CommitTally(connection: first, path: store), try CommitTally(connection: second, path: store)]
        let connections = [first, second]
        for writer in [0, 0, 0, 1, 0, 1, 1] {
            try tallies[writer].transaction { try connections[writer].execute("INSERT INTO t VALUES (\(writer))") }
        }
        XCTAssertEqual(try tallies[0].count(), 7)
        XCTAssertEqual(try CommitNote.read(besides: store), 7)
        XCTAssertNoThrow(try CommitTally(connection: SQLiteConnection(path: store, flags: [.readWrite]), path: store))
    }

    /// The only connection of an exclusive store counts its commits in memory and notes them without reading the
    /// note back: the file's count and the note still move together — past a failed write, a note deleted under it,
    /// and a reopen, which finds nothing lost.
    func testTheSoleWriterOfAnExclusiveStoreCountsAndNotesEveryCommit() throws {
        let store = path("exclusive.sqlite")
        do {
            let connection = try SQLiteConnection(path: store, flags: [.readWrite, .create], access: .exclusive)
            try connection.enableWAL()
            try connection.execute("CREATE TABLE t (n INTEGER)")
            let tally = try CommitTally(connection: connection, path: store)
            for n in 1...3 { try tally.transaction { try connection.execute("INSERT INTO t VALUES (\(n))") } }
            XCTAssertThrowsError(try tally.transaction { try connection.execute("INSERT INTO missing VALUES (1)") })
            try tally.transaction { try connection.execute("INSERT INTO t VALUES (4)") }
            XCTAssertEqual(try tally.count(), 4)
            XCTAssertEqual(try CommitNote.read(besides: store), 4)
            try FileManager.default.removeItem(atPath: CommitNote.path(besides: store))
            try tally.transaction { try connection.execute("INSERT INTO t VALUES (5)") }
            XCTAssertEqual(try CommitNote.read(besides: store), 5, "a note deleted under the writer is made again with the count")
        }
        // The first connection is closed (its lock with it): the next one finds every commit noted, and counts on.
        let connection = try SQLiteConnection(path: store, flags: [.readWrite], access: .exclusive)
        let tally = try CommitTally(connection: connection, path: store)
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (6)") }
        XCTAssertEqual(try tally.count(), 6)
        XCTAssertEqual(try CommitNote.read(besides: store), 6)
    }

    /// A body that writes the count itself, beside numbers of its own in the tally's row, is given the next number:
    /// the file's count and the note move together as with the tally's own write, a failed body counts nothing, and
    /// the next open finds nothing lost and counts on — by either kind of transaction.
    func testABodyThatWritesTheCountItselfIsGivenTheNextNumber() throws {
        let store = path("counted-by-body.sqlite")
        do {
            let connection = try SQLiteConnection(path: store, flags: [.readWrite, .create], access: .exclusive)
            try connection.enableWAL()
            try connection.execute("""
                CREATE TABLE commit_tally (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL, saved INTEGER);
                INSERT INTO commit_tally (id, n) VALUES (1, 0);
                """)
            let tally = try CommitTally(connection: connection, path: store)
            func save(_ saved: Int64, failing: Bool = false) throws {
                try tally.transaction(countedByBody: { count in
                    try connection.withStatement("UPDATE commit_tally SET n = ?, saved = ? WHERE id = 1", bindings: [.integer(count), .integer(saved)]) { try $0.run() }
                    if failing { try connection.execute("INSERT INTO missing VALUES (1)") }
                })
            }
            try save(10)
            try save(20)
            XCTAssertThrowsError(try save(30, failing: true))
            try save(40)
            XCTAssertEqual(try tally.count(), 3)
            XCTAssertEqual(try CommitNote.read(besides: store), 3)
            let saved = try connection.withStatement("SELECT saved FROM commit_tally") { try $0.step() ? try $0.int64(at: 0) : nil }
            XCTAssertEqual(saved, 40, "the failed body's number is not in the row")
        }
        let connection = try SQLiteConnection(path: store, flags: [.readWrite], access: .exclusive)
        let tally = try CommitTally(connection: connection, path: store)
        try tally.transaction { try connection.execute("UPDATE commit_tally SET saved = 50") }
        XCTAssertEqual(try tally.count(), 4)
        XCTAssertEqual(try CommitNote.read(besides: store), 4)
    }

    /// A note the sole writer cannot write (its name taken by a folder) is said, and once it can again the note is the
    /// count: what the writer remembered of the note is not trusted past a failed write.
    func testTheSoleWritersNoteComesBackToTheCountAfterItCouldNotBeWritten() throws {
        let store = path("exclusive-unwritable.sqlite"), note = CommitNote.path(besides: store)
        let connection = try SQLiteConnection(path: store, flags: [.readWrite, .create], access: .exclusive)
        try connection.enableWAL()
        try connection.execute("CREATE TABLE t (n INTEGER)")
        let tally = try CommitTally(connection: connection, path: store)
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (1)") }
        XCTAssertEqual(try CommitNote.read(besides: store), 1)
        try FileManager.default.removeItem(atPath: note)
        try FileManager.default.createDirectory(atPath: note, withIntermediateDirectories: false)
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (2)") }
        XCTAssertNotNil(tally.noteFailure, "the note could not be written, and that is said")
        try FileManager.default.removeItem(atPath: note)
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (3)") }
        XCTAssertEqual(try tally.count(), 3)
        XCTAssertEqual(try CommitNote.read(besides: store), 3, "the note is the count again")
        XCTAssertNil(tally.noteFailure)
    }

    /// The note as a power cut may leave it: written in an earlier boot of the machine.
    private func noteFromAnEarlierBoot(besides store: String) throws {
        let note = CommitNote.path(besides: store)
        let text = try String(contentsOfFile: note, encoding: .utf8)
        let boot = try XCTUnwrap(CommitNote.currentBoot, "the system names no boot")
        XCTAssertTrue(text.contains(boot), text)
        try text.replacingOccurrences(of: boot, with: "00000000-0000-0000-0000-000000000000").write(toFile: note, atomically: false, encoding: .utf8)
    }

    /// A power cut under `synchronous = NORMAL`: the store as the disk held it at its last flush — the log's header,
    /// which SQLite flushes before the log's first frame, without the two commits' frames after it — and the note,
    /// written after them, from the boot before. Not damage: the store opens with what it holds, the note comes
    /// down to it, and counting goes on from there. The same lead in this boot (a killed process loses nothing) is
    /// damage, and so is a deleted or zeroed log whenever it happened.
    func testAPowerCutThatLostTheLogsLastFramesIsNotDamage() throws {
        let (connection, store) = try storeWithWritesInItsLog()
        let wal = try Data(contentsOf: URL(fileURLWithPath: store + "-wal"))
        func copy(_ name: String, log: Data?, earlierBoot: Bool) throws -> String {
            let copy = path(name)
            try FileManager.default.copyItem(atPath: store, toPath: copy)
            try FileManager.default.copyItem(atPath: store + "-committed", toPath: copy + "-committed")
            try log?.write(to: URL(fileURLWithPath: copy + "-wal"))
            if earlierBoot { try noteFromAnEarlierBoot(besides: copy) }
            return copy
        }
        let flushed = try copy("power-cut.sqlite", log: wal.prefix(32), earlierBoot: true)
        let opened = try SQLiteConnection(path: flushed, flags: [.readWrite])
        let tally = try CommitTally(connection: opened, path: flushed)
        XCTAssertEqual(tally.lostToRestart, 2, "the two commits only the log's unflushed frames held")
        XCTAssertEqual(try tally.count(), 1)
        XCTAssertEqual(try CommitNote.reading(besides: flushed), CommitNote.Reading(number: 1, boot: CommitNote.currentBoot))
        try tally.transaction { try opened.execute("INSERT INTO t VALUES (4)") }
        XCTAssertEqual(try CommitNote.read(besides: flushed), 2)
        XCTAssertEqual(try CommitTally(connection: SQLiteConnection(path: flushed, flags: [.readWrite]), path: flushed).lostToRestart, 0)

        let damaged: [(String, Data?, Bool)] = [("the same boot", wal.prefix(32), false), ("deleted", nil, true), ("zeroed", Data(count: wal.count), true)]
        for (index, (what, log, earlierBoot)) in damaged.enumerated() {
            let copied = try copy("damaged\(index).sqlite", log: log, earlierBoot: earlierBoot)
            XCTAssertThrowsError(try CommitTally(connection: SQLiteConnection(path: copied, flags: [.readWrite]), path: copied), what) { error in
                XCTAssertEqual((error as? LostCommits)?.noted, 3, "\(what): \(error)")
            }
        }
        // A note from an earlier boot that the store matches is this boot's from its first open: a lead found later is damage.
        let matched = try copy("matched.sqlite", log: wal, earlierBoot: true)
        XCTAssertEqual(try CommitTally(connection: SQLiteConnection(path: matched, flags: [.readWrite]), path: matched).lostToRestart, 0)
        XCTAssertEqual(try CommitNote.reading(besides: matched)?.boot, CommitNote.currentBoot)
        withExtendedLifetime(connection) {}
    }

    /// A note held by a process that never lets go (stopped, hung) is an error naming it after the wait, not a hang:
    /// an open is refused with it; a commit stands, its note left behind (which proves nothing wrong) and written
    /// past by the next commit once the note is free.
    func testANoteHeldByAnotherProcessIsAnErrorAfterTheWait() throws {
        let (connection, store) = try storeWithWritesInItsLog()
        let tally = try CommitTally(connection: connection, path: store, lockTimeout: 0.2)
        let holder = open(CommitNote.path(besides: store), O_RDWR)
        XCTAssertEqual(flock(holder, LOCK_EX), 0)
        XCTAssertThrowsError(try CommitNote.read(besides: store, timeout: 0.2)) { error in
            XCTAssertEqual((error as? CommitNoteBusy)?.description, "the commit note \(store)-committed stayed locked by another process for 0.2 s (one holding it is stopped or hung)")
        }
        XCTAssertThrowsError(try CommitNote.verify(besides: store, stored: { 3 }, timeout: 0.2)) { XCTAssertTrue($0 is CommitNoteBusy, "\($0)") }
        XCTAssertThrowsError(try CommitNote.note(9, besides: store, timeout: 0.2)) { XCTAssertTrue($0 is CommitNoteBusy, "\($0)") }
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (4)") }
        XCTAssertNotNil(tally.noteFailure, "the commit stands, its note not written")
        XCTAssertEqual(try tally.count(), 4)
        close(holder)
        XCTAssertEqual(try CommitNote.read(besides: store), 3)
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (5)") }
        XCTAssertNil(tally.noteFailure)
        XCTAssertEqual(try CommitNote.read(besides: store), 5)
    }

    /// A note that cannot be written — here a folder in its place, which even root cannot write as a file — leaves the
    /// commit standing, and is said once through `onNoteFailure` (the broker puts it on the bus as `storage-failed`, a
    /// plugin in its log) until a note is written again; a later failure is said again.
    func testANoteThatCannotBeWrittenIsSaidOnceUntilItIsWrittenAgain() throws {
        let (connection, store) = try storeWithWritesInItsLog()
        let tally = try CommitTally(connection: connection, path: store)
        var said: [String] = []
        tally.onNoteFailure = { said.append($0) }
        let note = CommitNote.path(besides: store)
        try FileManager.default.removeItem(atPath: note)
        try FileManager.default.createDirectory(atPath: note, withIntermediateDirectories: false)
        for n in 4...5 { try tally.transaction { try connection.execute("INSERT INTO t VALUES (\(n))") } }
        XCTAssertEqual(try tally.count(), 5, "the commits stand")
        XCTAssertEqual(said, ["\(store): cannot write the commit note \(note): Is a directory; its commits stand, but until this is fixed a lost write-ahead log or a power cut may go unnoticed or lose more"])
        XCTAssertTrue(tally.noteFailure is CommitNoteUnwritable, "\(String(describing: tally.noteFailure))")
        try FileManager.default.removeItem(atPath: note)
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (6)") }
        XCTAssertNil(tally.noteFailure)
        XCTAssertEqual(try CommitNote.read(besides: store), 6)
        try FileManager.default.removeItem(atPath: note)
        try FileManager.default.createDirectory(atPath: note, withIntermediateDirectories: false)
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (7)") }
        XCTAssertEqual(said.count, 2, "a new failure is said again")
    }

    /// The note stays open between commits, and follows its name: moved away, a new one is made at the path; another
    /// file renamed over it is the note from then on (raised only past its number); a symbolic link in its place is
    /// refused and said, as when the note is opened afresh.
    func testAKeptNoteFollowsItsPath() throws {
        let (connection, store) = try storeWithWritesInItsLog()
        let tally = try CommitTally(connection: connection, path: store)
        var said: [String] = []
        tally.onNoteFailure = { said.append($0) }
        let note = CommitNote.path(besides: store), moved = note + ".moved", other = note + ".other"
        func commit() throws { try tally.transaction { try connection.execute("INSERT INTO t VALUES (0)") } }
        try commit()
        try FileManager.default.moveItem(atPath: note, toPath: moved)
        try commit()
        XCTAssertEqual(try CommitNote.read(besides: store), 5, "a new note at the path")
        XCTAssertEqual(try String(contentsOfFile: moved, encoding: .utf8).prefix(20), "00000000000000000004", "the moved note is left as it was")
        try "9 x".write(toFile: other, atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(other, note), 0)
        try commit()
        XCTAssertEqual(try CommitNote.read(besides: store), 9, "the file renamed over it is read: a lower number changes nothing")
        try commit()
        try commit()
        try commit()
        XCTAssertEqual(try CommitNote.read(besides: store), 9)
        try commit()
        XCTAssertEqual(try CommitNote.read(besides: store), 10)
        XCTAssertEqual(said, [])
        try FileManager.default.removeItem(atPath: note)
        try FileManager.default.createSymbolicLink(atPath: note, withDestinationPath: moved)
        try commit()
        XCTAssertEqual(said, ["\(store): cannot write the commit note \(note): Too many levels of symbolic links; its commits stand, but until this is fixed a lost write-ahead log or a power cut may go unnoticed or lose more"])
        XCTAssertEqual(try String(contentsOfFile: moved, encoding: .utf8).prefix(20), "00000000000000000004", "nothing written through the link")
        try FileManager.default.removeItem(atPath: note)
        try commit()
        XCTAssertNil(tally.noteFailure)
        XCTAssertEqual(try CommitNote.read(besides: store), 12)
    }

    /// The kept note is read and written in its file's mapped page while the file is a whole note long: cut shorter or
    /// rewritten in place under the writer (the same file), what it then says is read from its bytes — a higher number
    /// kept, a lower or unreadable one raised to the count — and the note is written whole again.
    func testANoteCutOrRewrittenInPlaceUnderItsWriterIsReadAndWrittenWholeAgain() throws {
        let (connection, store) = try storeWithWritesInItsLog()
        let tally = try CommitTally(connection: connection, path: store)
        var said: [String] = []
        tally.onNoteFailure = { said.append($0) }
        let note = CommitNote.path(besides: store)
        func commit() throws { try tally.transaction { try connection.execute("INSERT INTO t VALUES (0)") } }
        func rewrite(_ text: String) throws {
            let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: note))
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data(text.utf8))
            try handle.close()
        }
        func size() throws -> Int { try XCTUnwrap(FileManager.default.attributesOfItem(atPath: note)[.size] as? Int) }
        try commit()
        XCTAssertEqual(try CommitNote.read(besides: store), 4)
        let whole = try size()
        try rewrite("9 x")
        try commit()
        XCTAssertEqual(try CommitNote.read(besides: store), 9, "the number written in place is read: a lower one changes nothing")
        for _ in 6...10 { try commit() }
        XCTAssertEqual(try CommitNote.read(besides: store), 10)
        XCTAssertEqual(try size(), whole, "written whole again")
        try rewrite("")
        try commit()
        XCTAssertEqual(try CommitNote.reading(besides: store), CommitNote.Reading(number: 11, boot: CommitNote.currentBoot), "a note cut to nothing is made again")
        try rewrite("garbage")
        try commit()
        XCTAssertEqual(try CommitNote.read(besides: store), 12, "an unreadable note is written over")
        try commit()
        XCTAssertEqual(try CommitNote.read(besides: store), 13)
        XCTAssertEqual(try size(), whole)
        XCTAssertEqual(said, [])
    }

    /// A power cut loses at most the commits since the last flush: every 32nd commit (by the store's own count, so two
    /// writers share the bound) flushes the write-ahead log to the disk; a process flushes at most once a second, the
    /// 32nd commit within a second of its last flush owing one to the first commit a second after.
    func testEveryThirtySecondCommitIsFlushedAtMostOnceASecond() {
        var clock: TimeInterval = 100
        let followUp = CommitFollowUp(path: path("store.sqlite"), now: { clock })
        let interval = CommitFollowUp.syncInterval
        for n in 1..<interval { followUp.committed(through: n, after: n - 1) }
        XCTAssertEqual(followUp.syncedThrough, 0)
        followUp.committed(through: interval, after: interval - 1)
        waitUntil("the first 32nd flushed") { followUp.syncedThrough == interval }
        clock += 0.5
        followUp.committed(through: 2 * interval + 3, after: interval)  // one transaction past the next multiple
        XCTAssertEqual(followUp.syncedThrough, interval, "half a second after the last flush: owed")
        clock += 0.5
        followUp.committed(through: 2 * interval + 4, after: 2 * interval + 3)
        waitUntil("owed, and paid at the first commit a second on") { followUp.syncedThrough == 2 * interval + 4 }
        clock += 5
        followUp.committed(through: 2 * interval + 5, after: 2 * interval + 4)
        XCTAssertEqual(followUp.syncedThrough, 2 * interval + 4, "nothing owed: no flush however long since the last")
        XCTAssertNil(followUp.failure)
    }

    func testEveryThirtySecondCommitIsFlushedToTheDisk() throws {
        let (connection, store) = try storeWithWritesInItsLog()
        let tally = try CommitTally(connection: connection, path: store)
        let interval = CommitFollowUp.syncInterval
        while try tally.count() < interval - 1 { try tally.transaction { try connection.execute("INSERT INTO t VALUES (0)") } }
        XCTAssertEqual(tally.syncedThrough, 0, "nothing flushed before the 32nd commit")
        try tally.transaction { try connection.execute("INSERT INTO t VALUES (0)") }
        waitUntil("the 32nd commit flushed") { tally.syncedThrough == interval }
        let second = try SQLiteConnection(path: store, flags: [.readWrite])
        let other = try CommitTally(connection: second, path: store)
        while try tally.count() < 2 * interval + 5 {
            let (writer, tallied) = try tally.count() % 2 == 0 ? (connection, tally) : (second, other)
            try tallied.transaction { try writer.execute("INSERT INTO t VALUES (0)") }
        }
        waitUntil("whichever writer made the 64th commit flushed it") { max(tally.syncedThrough, other.syncedThrough) == 2 * interval }
        XCTAssertNil(tally.noteFailure)
        XCTAssertNil(other.noteFailure)
    }

    /// A flush runs on the flusher, never on the committing thread; one owed while another of the store's is in flight
    /// runs after it (here the flusher is held until the second is owed), through the commit that owed it.
    func testAFlushOwedWhileOneRunsIsDoneAfterIt() {
        var clock: TimeInterval = 100
        let flusher = LogFlusher(label: "test.flusher")
        let followUp = CommitFollowUp(path: path("store.sqlite"), flusher: flusher, now: { clock })
        let interval = CommitFollowUp.syncInterval, held = DispatchSemaphore(value: 0)
        flusher.run { held.wait() }
        followUp.committed(through: interval, after: interval - 1)
        clock += 1
        followUp.committed(through: 2 * interval, after: 2 * interval - 1)
        XCTAssertEqual(followUp.syncedThrough, 0, "the committing thread did not flush: the flusher is held")
        held.signal()
        waitUntil("the owed flush done after the one in flight") { followUp.syncedThrough == 2 * interval }
        XCTAssertNil(followUp.failure)
    }

    /// A flush that fails — here the log a symbolic link to itself, which no open follows — leaves the commits standing,
    /// is said once, on the committing thread at its next commit, and owes a flush again: the first commit a second on
    /// flushes, and once it succeeds the failure is gone.
    func testAFailingFlushIsSaidOnceAndTriedAgain() throws {
        var clock: TimeInterval = 100
        let store = path("store.sqlite"), log = store + "-wal"
        try FileManager.default.createSymbolicLink(atPath: log, withDestinationPath: log)
        let followUp = CommitFollowUp(path: store, now: { clock })
        var said: [String] = []
        followUp.onFailure = { said.append($0) }
        let interval = CommitFollowUp.syncInterval
        followUp.committed(through: interval, after: interval - 1)
        waitUntil("the flush failed") { followUp.failure != nil }
        XCTAssertTrue(followUp.failure is CommitSyncFailed, "\(String(describing: followUp.failure))")
        for n in interval + 1...interval + 3 { followUp.committed(through: n, after: n - 1) }
        XCTAssertEqual(said, ["\(store): cannot flush \(log) to the disk: Too many levels of symbolic links; its commits stand, but until this is fixed a lost write-ahead log or a power cut may go unnoticed or lose more"])
        XCTAssertEqual(followUp.syncedThrough, 0)
        try FileManager.default.removeItem(atPath: log)
        XCTAssertTrue(FileManager.default.createFile(atPath: log, contents: Data()))
        clock += 1
        followUp.committed(through: interval + 4, after: interval + 3)
        waitUntil("the flush tried again, with no new multiple of 32") { followUp.syncedThrough == interval + 4 }
        XCTAssertNil(followUp.failure)
        XCTAssertEqual(said.count, 1)
    }
}
