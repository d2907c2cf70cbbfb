// Tests of the SQLite wrapper: typed binding and columns, errors, transactions, WAL, busy, damaged files.
import CSQLite
import Foundation
import SQLite
import ShieldBusTestSupport
import XCTest

final class SQLiteTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sqlite-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A connection's page cache takes memory for each page when it first holds it, not from a first bulk of 20 pages
    /// at its open (which a new process would fault in at every store it opens): reading eight pages of a store
    /// allocates each of them on its own, which SQLite counts as page-cache memory taken outside a bulk
    /// (`SQLITE_STATUS_PAGECACHE_OVERFLOW`; pages served from a bulk are not counted).
    func testAnOpenTakesNoBulkOfPageCacheMemory() throws {
        let file = path("first.sqlite")
        let maker = try SQLiteConnection(path: file)
        try maker.execute("CREATE TABLE t (n INTEGER, filler BLOB)")
        try maker.transaction { for n in 0..<16 { try maker.execute("INSERT INTO t VALUES (\(n), zeroblob(2000))") } }
        let pages = try maker.withStatement("PRAGMA page_count") { try $0.step() ? try $0.int64(at: 0) ?? 0 : 0 }
        XCTAssertGreaterThanOrEqual(pages, 8)
        XCTAssertLessThan(pages, 20, "fewer pages than a bulk holds")
        var before: Int64 = 0, after: Int64 = 0, highest: Int64 = 0
        // The count is the process's: a flush or checkpoint an earlier test left on the flusher must not free pages
        // while this one reads.
        let drained = DispatchSemaphore(value: 0)
        LogFlusher.shared.run { drained.signal() }
        drained.wait()
        sqlite3_status64(SQLITE_STATUS_PAGECACHE_OVERFLOW, &before, &highest, 0)
        let db = try SQLiteConnection(path: file)
        XCTAssertEqual(try db.withStatement("SELECT count(*), sum(length(filler)) FROM t") { try $0.step() ? try $0.int64(at: 0) : nil }, 16)
        sqlite3_status64(SQLITE_STATUS_PAGECACHE_OVERFLOW, &after, &highest, 0)
        withExtendedLifetime(db) {
            XCTAssertGreaterThanOrEqual(after - before, pages * 4096, "each page read was allocated on its own, none from a bulk")
        }
    }

    /// SQLite keeps no count of the memory it uses (`SQLITE_CONFIG_MEMSTATUS` off, `SQLiteLibrary.setUp`): counting
    /// takes a lock and asks the allocator each block's size at every allocation, and nothing here reads the count.
    func testSQLiteKeepsNoCountOfItsMemory() throws {
        let db = try SQLiteConnection(path: path("counted.sqlite"))
        try db.execute("CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1)")
        var current: Int64 = -1, highest: Int64 = -1
        sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &current, &highest, 0)
        withExtendedLifetime(db) {
            XCTAssertEqual(current, 0)
            XCTAssertEqual(sqlite3_memory_used(), 0)
        }
    }

    /// `schemaHoldsTable` looks a table up in the schema the connection read: a table is held, a view or a missing
    /// name is not, and a table another connection made since is not seen until a statement rereads the schema.
    func testTheSchemaHeldNamesItsTablesAndNotAnotherConnectionsNewOnes() throws {
        let file = path("schema.sqlite")
        let db = try SQLiteConnection(path: file)
        try db.execute("CREATE TABLE t (n INTEGER); CREATE VIEW v AS SELECT n FROM t")
        XCTAssertTrue(try db.schemaHoldsTable("t"))
        XCTAssertFalse(try db.schemaHoldsTable("v"), "a view is not a table")
        XCTAssertFalse(try db.schemaHoldsTable("missing"))
        try SQLiteConnection(path: file).execute("CREATE TABLE later (n INTEGER)")
        XCTAssertFalse(try db.schemaHoldsTable("later"), "the schema this connection read")
        try db.execute("SELECT count(*) FROM later")
        XCTAssertTrue(try db.schemaHoldsTable("later"), "read again by a statement")
    }

    /// `withStatement` keeps one compiled statement per SQL text: the same object at every use, reset between uses
    /// (a read left half-stepped is not resumed), usable again after a body that threw, and a use of the same SQL
    /// inside the body gets a statement of its own, without disturbing the outer one's rows.
    func testKeptStatementsAreReusedResetAndNestedSafely() throws {
        let db = try SQLiteConnection(path: ":memory:")
        try db.execute("CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3)")
        let sql = "SELECT n FROM t WHERE n >= ? ORDER BY n"
        let first = try db.withStatement(sql, bindings: [.integer(1)]) { statement -> ObjectIdentifier in
            XCTAssertTrue(try statement.step())
            XCTAssertEqual(try statement.int64(at: 0), 1)
            return ObjectIdentifier(statement)
        }
        let again = try db.withStatement(sql, bindings: [.integer(2)]) { statement -> ObjectIdentifier in
            XCTAssertTrue(try statement.step())
            XCTAssertEqual(try statement.int64(at: 0), 2, "reset and bound afresh, not resumed")
            return ObjectIdentifier(statement)
        }
        XCTAssertEqual(first, again)
        struct Failure: Error {}
        XCTAssertThrowsError(try db.withStatement(sql, bindings: [.integer(3)]) { statement -> Void in
            _ = try statement.step()
            throw Failure()
        })
        let nested = try db.withStatement(sql, bindings: [.integer(1)]) { outer -> [Int64] in
            XCTAssertTrue(try outer.step())
            let inner = try db.withStatement(sql, bindings: [.integer(3)]) { inner -> (ObjectIdentifier, Int64?) in
                XCTAssertTrue(try inner.step())
                return (ObjectIdentifier(inner), try inner.int64(at: 0))
            }
            XCTAssertNotEqual(inner.0, ObjectIdentifier(outer))
            XCTAssertEqual(inner.1, 3)
            var rows = [try outer.int64(at: 0) ?? -1]
            while try outer.step() { rows.append(try outer.int64(at: 0) ?? -1) }
            return rows
        }
        XCTAssertEqual(nested, [1, 2, 3])
        let afterwards = try db.withStatement(sql, bindings: [.integer(1)]) { statement -> ObjectIdentifier in
            XCTAssertTrue(try statement.step())
            return ObjectIdentifier(statement)
        }
        XCTAssertEqual(afterwards, first, "the kept statement, not the nested one, stays kept")
        // An owner that keeps the statement itself uses the same one, reset between uses and nested safely too.
        let owned = try db.keptStatement(sql)
        XCTAssertEqual(ObjectIdentifier(owned), first)
        let ownedRows = try db.withStatement(owned, bindings: [.integer(2)]) { outer -> [Int64] in
            XCTAssertTrue(try outer.step())
            let inner = try db.withStatement(owned, bindings: [.integer(1)]) { inner -> (ObjectIdentifier, Int64?) in
                XCTAssertTrue(try inner.step())
                return (ObjectIdentifier(inner), try inner.int64(at: 0))
            }
            XCTAssertNotEqual(inner.0, ObjectIdentifier(outer))
            XCTAssertEqual(inner.1, 1)
            var rows = [try outer.int64(at: 0) ?? -1]
            while try outer.step() { rows.append(try outer.int64(at: 0) ?? -1) }
            return rows
        }
        XCTAssertEqual(ownedRows, [2, 3])
        XCTAssertEqual(try db.withStatement(owned, bindings: [.integer(3)]) { try $0.step() ? try $0.int64(at: 0) : nil }, 3,
                       "reset and bound afresh")
    }

    func testTypedBindAndColumnRoundTrip() throws {
        let db = try SQLiteConnection(path: ":memory:")
        try db.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n)")
        let insert = try db.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)")
        try insert.bind(Int64.min, at: 1)
        try insert.bind(-0.125, at: 2)
        try insert.bind("héllo\u{0}wörld ✓", at: 3)
        try insert.bind([0, 1, 255] as [UInt8], at: 4)
        try insert.bindNull(at: 5)
        try insert.run()
        insert.reset()
        try insert.bind([.integer(Int64.max), .real(1e300), .text(""), .blob(Data()), .integer(7)])
        try insert.run()
        insert.reset()
        try insert.bind(Int64(0), at: 1)
        try insert.bind("", at: 3)
        try insert.bind([] as [UInt8], at: 4)
        try insert.run()

        let select = try db.prepare("SELECT i, r, s, b, n FROM t ORDER BY i")
        XCTAssertTrue(try select.step())
        XCTAssertEqual(try select.int64(at: 0), Int64.min)
        XCTAssertEqual(try select.double(at: 1), -0.125)
        XCTAssertEqual(try select.string(at: 2), "héllo\u{0}wörld ✓")
        XCTAssertEqual(try select.bytes(at: 3), [0, 1, 255])
        XCTAssertTrue(select.isNull(at: 4))
        XCTAssertNil(try select.int64(at: 4))
        XCTAssertEqual(select.columnName(at: 2), "s")
        XCTAssertEqual(select.columnCount, 5)
        XCTAssertTrue(try select.step())
        XCTAssertEqual(try select.int64(at: 0), 0)
        XCTAssertEqual(select.value(at: 2), .text(""), "empty text stays empty text, not NULL")
        XCTAssertEqual(select.value(at: 3), .blob(Data()), "an empty array binds an empty blob, not NULL")
        XCTAssertTrue(try select.step())
        XCTAssertEqual(try select.int64(at: 0), Int64.max)
        XCTAssertEqual(try select.double(at: 1), 1e300)
        XCTAssertEqual(try select.string(at: 2), "")
        // An empty blob stays an empty blob, not NULL.
        XCTAssertEqual(select.value(at: 3), .blob(Data()))
        XCTAssertEqual(try select.data(at: 3), Data())
        XCTAssertEqual(try select.double(at: 4), 7, "integers widen to Double")
        XCTAssertFalse(try select.step())
    }

    func testTypedColumnReadOfAnotherTypeThrows() throws {
        let db = try SQLiteConnection(path: ":memory:")
        let select = try db.prepare("SELECT 'text' AS label")
        XCTAssertTrue(try select.step())
        XCTAssertThrowsError(try select.int64(at: 0)) { error in
            guard case SQLiteError.columnTypeMismatch(0, "label", .integer, .text, _) = error else {
                return XCTFail("unexpected \(error)")
            }
        }
    }

    func testErrorCarriesCodesSQLAndMessage() throws {
        let db = try SQLiteConnection(path: ":memory:")
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);")
        let sql = "INSERT INTO t VALUES (1)"
        XCTAssertThrowsError(try db.execute(sql)) { error in
            guard let error = error as? SQLiteError, case .failed(let code, let extended, let message, let failedSQL, _) = error else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(code, SQLITE_CONSTRAINT)
            XCTAssertEqual(extended, SQLITE_CONSTRAINT | (6 << 8), "SQLITE_CONSTRAINT_PRIMARYKEY")
            XCTAssertEqual(failedSQL, sql)
            XCTAssertTrue(message.contains("UNIQUE constraint failed"), message)
            XCTAssertTrue(error.description.contains(sql))
        }
        XCTAssertThrowsError(try db.prepare("SELEKT 1")) { error in
            XCTAssertEqual((error as? SQLiteError)?.code, SQLITE_ERROR)
            XCTAssertTrue("\(error)".contains("syntax error"), "\(error)")
        }
        XCTAssertThrowsError(try db.prepare("SELECT 1; SELECT 2")) { error in
            XCTAssertTrue("\(error)".contains("use execute"), "\(error)")
        }
    }

    func testTransactionCommitsOrRollsBack() throws {
        let db = try SQLiteConnection(path: path("tx.sqlite"))
        try db.execute("CREATE TABLE t (v INTEGER)")
        struct Abort: Error {}
        XCTAssertThrowsError(try db.transaction(.immediate) {
            try db.execute("INSERT INTO t VALUES (1)")
            throw Abort()
        }) { XCTAssertTrue($0 is Abort) }
        XCTAssertFalse(db.isInTransaction)
        let inserted = try db.transaction(.immediate) { () -> Int in
            try db.execute("INSERT INTO t VALUES (2)")
            XCTAssertThrowsError(try db.transaction { }) { error in
                guard case SQLiteError.nestedTransaction = error else { return XCTFail("unexpected \(error)") }
            }
            return 2
        }
        XCTAssertEqual(inserted, 2)
        let count = try db.prepare("SELECT group_concat(v) FROM t")
        XCTAssertTrue(try count.step())
        XCTAssertEqual(try count.string(at: 0), "2")
    }

    func testWALModeAndIntegrityCheck() throws {
        let db = try SQLiteConnection(path: path("wal.sqlite"))
        try db.enableWAL()
        let mode = try db.prepare("PRAGMA journal_mode")
        XCTAssertTrue(try mode.step())
        XCTAssertEqual(try mode.string(at: 0), "wal")
        // NORMAL (1): commits wait for the disk only at checkpoints, not once each.
        let synchronous = try db.prepare("PRAGMA synchronous")
        XCTAssertTrue(try synchronous.step())
        XCTAssertEqual(try synchronous.int64(at: 0), 1)
        XCTAssertEqual(try db.quickCheck(), [])
        XCTAssertThrowsError(try SQLiteConnection(path: ":memory:").enableWAL()) { error in
            guard case SQLiteError.journalModeRejected(_, "memory", _) = error else { return XCTFail("unexpected \(error)") }
        }
    }

    /// A closed database file of a few pages: 500 rows of text.
    func databaseOfSeveralPages(_ name: String) throws -> String {
        let file = path(name)
        let db = try SQLiteConnection(path: file)
        try db.execute("""
            CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
            INSERT INTO t SELECT i, printf('value-%05d-padding-padding-padding', i) FROM n;
            """)
        return file
    }

    func testQuickCheckReportsDamagedPages() throws {
        let file = try databaseOfSeveralPages("damaged.sqlite")
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: file))
        try handle.seek(toOffset: 4096 * 2 + 200)
        handle.write(Data(repeating: 0xFF, count: 64))
        try handle.close()
        let problems = try SQLiteConnection(path: file).quickCheck()
        XCTAssertFalse(problems.isEmpty)
    }

    /// A file cut anywhere short of its end is refused on opening or reported by the check, even where the lost
    /// bytes would read back as the zeros SQLite fills a short last page with (a cut of a few bytes passes
    /// `quick_check` alone).
    func testQuickCheckReportsAFileCutAnywhere() throws {
        let file = try databaseOfSeveralPages("whole.sqlite")
        let whole = try XCTUnwrap(FileManager.default.contents(atPath: file))
        XCTAssertEqual(try SQLiteConnection(path: file).quickCheck(), [])
        var random = SystemRandomNumberGenerator()
        let cuts = [1, 2, 8, 100, 4095, 4096, whole.count - 99, whole.count - 1] + (0..<20).map { _ in Int.random(in: 1..<whole.count, using: &random) }
        for lost in cuts where lost < whole.count {
            let cutFile = path("cut-\(lost).sqlite")
            try whole.prefix(whole.count - lost).write(to: URL(fileURLWithPath: cutFile))
            let problems: [String]
            do {
                problems = try SQLiteConnection(path: cutFile).quickCheck()
            } catch let error as SQLiteError where error.isCorrupt {
                problems = ["\(error)"]
            } catch SQLiteError.notADatabase(cutFile) {
                // Cut inside the 100-byte header: refused as not a database, and left as it was.
                XCTAssertLessThan(whole.count - lost, 100, "\(lost) of \(whole.count) bytes cut off")
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: cutFile)), whole.prefix(whole.count - lost))
                continue
            }
            XCTAssertFalse(problems.isEmpty, "\(lost) of \(whole.count) bytes cut off")
        }
    }

    /// The check reads the page size from the file's header: a file of any page size — 65,536 is recorded as 1 — that
    /// ends partway through a page is reported, with its page size, where `quick_check` alone passes it.
    func testQuickCheckReportsAPartialPageWhateverThePageSize() throws {
        for pageSize in [512, 4096, 65_536] {
            let file = path("pages-\(pageSize).sqlite")
            let db = try SQLiteConnection(path: file, pageSize: pageSize)
            try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a'), ('b')")
            XCTAssertEqual(try db.quickCheck(), [], "\(pageSize)")
            let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: file))
            try handle.seekToEnd()
            handle.write(Data(repeating: 0, count: 7))
            try handle.close()
            let problems = try SQLiteConnection(path: file).quickCheck()
            XCTAssertTrue(problems.contains { $0.contains("not a whole number of \(pageSize)-byte pages") }, "\(pageSize): \(problems)")
        }
    }

    func testGarbageFileIsNotADatabaseAndStaysUntouched() throws {
        let file = path("garbage.sqlite")
        let garbage = Data(String(repeating: "this is not a database, just some text\n", count: 200).utf8)
        try garbage.write(to: URL(fileURLWithPath: file))
        for flags: SQLiteConnection.OpenFlags in [[.readWrite, .create], [.readWrite], [.readOnly]] {
            XCTAssertThrowsError(try SQLiteConnection(path: file, flags: flags)) { error in
                guard case SQLiteError.notADatabase(file) = error else { return XCTFail("unexpected \(error)") }
                XCTAssertTrue("\(error)".contains("not a SQLite database"))
            }
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: file)), garbage)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["garbage.sqlite"])
    }

    func testMissingFileWithoutCreateFails() throws {
        XCTAssertThrowsError(try SQLiteConnection(path: path("missing.sqlite"), flags: [.readWrite])) { error in
            XCTAssertEqual((error as? SQLiteError)?.code, SQLITE_CANTOPEN)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("missing.sqlite")))
    }

    func testBusyAfterTimeoutThenSucceedsOnceLockIsFree() throws {
        let file = path("busy.sqlite")
        let holder = try SQLiteConnection(path: file)
        try holder.enableWAL()
        try holder.execute("CREATE TABLE t (v INTEGER)")
        let waiter = try SQLiteConnection(path: file, busyTimeout: 0.05)
        try holder.execute("BEGIN IMMEDIATE")
        XCTAssertThrowsError(try waiter.transaction(.immediate) { try waiter.execute("INSERT INTO t VALUES (1)") }) { error in
            let error = error as? SQLiteError
            XCTAssertEqual(error?.isBusy, true)
            XCTAssertTrue("\(error!)".contains("BEGIN IMMEDIATE"), "\(error!)")
        }
        // WAL: a reader is not blocked by the writer.
        let read = try waiter.prepare("SELECT count(*) FROM t")
        XCTAssertTrue(try read.step())
        XCTAssertEqual(try read.int64(at: 0), 0)
        try holder.execute("COMMIT")
        try waiter.transaction(.immediate) { try waiter.execute("INSERT INTO t VALUES (1)") }
        read.reset()
        XCTAssertTrue(try read.step())
        XCTAssertEqual(try read.int64(at: 0), 1)
    }

    /// A connection opened `.exclusive` holds the file from open to close: another connection — here in the same
    /// process, as from another — is refused with an error naming the file; in WAL mode there is no shared-memory
    /// index (`-shm`), whose POSIX locks every transaction took; and the store opens again once it is closed.
    func testAnExclusiveConnectionRefusesAnotherUntilClosed() throws {
        let file = path("exclusive.sqlite")
        do {
            let holder = try SQLiteConnection(path: file, access: .exclusive, busyTimeout: 0.05)
            try holder.enableWAL()
            try holder.execute("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1)")
            for flags: SQLiteConnection.OpenFlags in [[.readWrite], [.readOnly]] {
                XCTAssertThrowsError(try SQLiteConnection(path: file, flags: flags, busyTimeout: 0.05)) { error in
                    guard case .heldByAnotherConnection(let path, _)? = error as? SQLiteError else { return XCTFail("\(error)") }
                    XCTAssertEqual(path, file)
                    XCTAssertTrue("\(error)".contains("keeps it to itself"), "\(error)")
                }
            }
            XCTAssertThrowsError(try SQLiteConnection(path: file, access: .exclusive, busyTimeout: 0.05))
            XCTAssertFalse(FileManager.default.fileExists(atPath: file + "-shm"), "the WAL index is in the holder's memory")
        }
        let reopened = try SQLiteConnection(path: file, flags: [.readOnly])
        let read = try reopened.prepare("SELECT count(*) FROM t")
        XCTAssertTrue(try read.step())
        XCTAssertEqual(try read.int64(at: 0), 1)
    }

    /// An exclusive connection opened in WAL mode makes a new file's header in one rollback-mode write — the switch
    /// to WAL — not one for its claim and another for the switch (the header's change counter, at byte 24, counts
    /// them); it holds the file as any exclusive connection does, and a reopening finds it as it was left.
    func testAnExclusiveConnectionMadeInWALModeWritesANewFilesHeaderOnce() throws {
        func changeCounter(_ file: String) throws -> UInt32 {
            let header = try XCTUnwrap(FileManager.default.contents(atPath: file))
            return header[24..<28].reduce(0) { $0 << 8 | UInt32($1) }
        }
        let file = path("made-in-wal.sqlite"), before = path("made-then-switched.sqlite")
        do {
            let holder = try SQLiteConnection(path: file, access: .exclusive, busyTimeout: 0.05, pageSize: 2_048, writeAheadLog: true)
            XCTAssertEqual(try holder.withStatement("PRAGMA journal_mode") { try $0.step() ? try $0.string(at: 0) : nil }, "wal")
            XCTAssertEqual(try changeCounter(file), 1)
            XCTAssertThrowsError(try SQLiteConnection(path: file, busyTimeout: 0.05)) { error in
                guard case .heldByAnotherConnection? = error as? SQLiteError else { return XCTFail("\(error)") }
            }
            try holder.execute("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (7)")
            // Switched after the claim, as without `writeAheadLog`: two.
            let switched = try SQLiteConnection(path: before, access: .exclusive, pageSize: 2_048)
            try switched.enableWAL()
            XCTAssertEqual(try changeCounter(before), 2)
        }
        let reopened = try SQLiteConnection(path: file, access: .exclusive, busyTimeout: 0.05, writeAheadLog: true)
        XCTAssertEqual(try reopened.withStatement("SELECT v FROM t") { try $0.step() ? try $0.int64(at: 0) : nil }, 7)
        XCTAssertEqual(try reopened.withStatement("PRAGMA page_size") { try $0.step() ? try $0.int64(at: 0) : nil }, 2_048)
        XCTAssertEqual(try reopened.quickCheck(), [])
    }

    /// A page size given at open is the size of a file made then, in either access and in WAL mode; a file made earlier
    /// keeps its own size and its rows, whatever size a later open gives.
    func testAPageSizeGivenAtOpenSizesOnlyAFileMadeThen() throws {
        func pageSize(_ file: String) throws -> Int64? {
            try SQLiteConnection(path: file, flags: [.readOnly]).withStatement("PRAGMA page_size") { try $0.step() ? try $0.int64(at: 0) : nil }
        }
        for access: SQLiteConnection.Access in [.shared, .exclusive] {
            let file = path("sized-\(access).sqlite")
            do {
                let made = try SQLiteConnection(path: file, access: access, pageSize: 1_024)
                try made.enableWAL()
                try made.execute("CREATE TABLE t (v BLOB); INSERT INTO t VALUES (zeroblob(3000))")
            }
            XCTAssertEqual(try pageSize(file), 1_024, "\(access)")
            do {
                let reopened = try SQLiteConnection(path: file, access: access, pageSize: 8_192)
                try reopened.execute("INSERT INTO t VALUES (zeroblob(10))")
            }
            XCTAssertEqual(try pageSize(file), 1_024, "\(access): a file made earlier keeps its size")
            let read = try SQLiteConnection(path: file).prepare("SELECT count(*), sum(length(v)) FROM t")
            XCTAssertTrue(try read.step())
            XCTAssertEqual(try read.int64(at: 0), 2)
            XCTAssertEqual(try read.int64(at: 1), 3_010)
        }
        let plain = path("default.sqlite")
        try SQLiteConnection(path: plain).execute("CREATE TABLE t (v INTEGER)")
        XCTAssertEqual(try pageSize(plain), 4_096, "SQLite's default without one")
    }

    /// What an exclusive connection committed is in its WAL file when the commit returns: a copy of the files taken
    /// while it is still open (as a SIGKILL would leave them, the index lost with the process's memory) opens with it.
    func testAnExclusiveConnectionsCommitsSurviveItsProcess() throws {
        let file = path("killed.sqlite"), copy = path("after-kill.sqlite")
        let holder = try SQLiteConnection(path: file, access: .exclusive)
        try holder.enableWAL()
        try holder.execute("CREATE TABLE t (v INTEGER)")
        for value in 1...50 { try holder.transaction(.immediate) { try holder.execute("INSERT INTO t VALUES (\(value))") } }
        try FileManager.default.copyItem(atPath: file, toPath: copy)
        try FileManager.default.copyItem(atPath: file + "-wal", toPath: copy + "-wal")
        let recovered = try SQLiteConnection(path: copy)
        let read = try recovered.prepare("SELECT count(*), sum(v) FROM t")
        XCTAssertTrue(try read.step())
        XCTAssertEqual(try read.int64(at: 0), 50)
        XCTAssertEqual(try read.int64(at: 1), 1_275)
        XCTAssertEqual(try recovered.quickCheck(), [])
    }

    /// The storage's refusals, which the same operation may get past later, are told from the database's own.
    func testAFullOrReadOnlyDiskIsStorageUnavailableAndADamagedFileIsNot() {
        func failed(_ code: Int32, _ extended: Int32? = nil) -> SQLiteError {
            .failed(code: code, extendedCode: extended ?? code, message: "", sql: nil, path: "/x.sqlite")
        }
        // SQLITE_IOERR_SHMSIZE: a shared-memory file that cannot grow on a full disk.
        for unavailable in [failed(SQLITE_FULL), failed(SQLITE_IOERR, 4874), failed(SQLITE_READONLY),
                            .busy(path: "/x.sqlite", timeout: 1, extendedCode: SQLITE_BUSY, message: "", sql: nil)] {
            XCTAssertTrue(unavailable.isStorageUnavailable, "\(unavailable)")
        }
        // SQLITE_IOERR_READ, SQLITE_READONLY_DBMOVED, a lock conflict within one connection: the same every time.
        for own in [failed(SQLITE_CORRUPT), failed(SQLITE_CONSTRAINT), .notADatabase(path: "/x.sqlite"), failed(SQLITE_ERROR),
                    failed(SQLITE_IOERR, 266), failed(SQLITE_READONLY, 1032), failed(SQLITE_LOCKED), failed(SQLITE_NOMEM)] {
            XCTAssertFalse(own.isStorageUnavailable, "\(own)")
        }
    }

    /// A store made on a read-only file system: SQLite says only "unable to open database file"; the system's error
    /// makes it the storage refusing (which a plugin waits out), not a store that is wrong (which stops it).
    func testAStoreThatCannotBeMadeOnAReadOnlyFileSystemIsStorageUnavailable() throws {
        let disk = try SmallDisk(size: "1m")
        try disk.remount(readOnly: true)
        let folder = disk.path
        XCTAssertThrowsError(try SQLiteConnection(path: folder + "/new.sqlite")) { error in
            guard let error = error as? SQLiteError else { return XCTFail("\(error)") }
            XCTAssertTrue(error.isStorageUnavailable, "\(error)")
            XCTAssertTrue("\(error)".contains("read-only file system"), "\(error)")
        }
        // A file that cannot be opened for another reason stays what it was: a folder that is missing, a file that is
        // missing and was not to be made.
        for (path, flags) in [(folder + "/missing/new.sqlite", [.readWrite, .create]), (folder + "/absent.sqlite", [.readWrite])] as [(String, SQLiteConnection.OpenFlags)] {
            XCTAssertThrowsError(try SQLiteConnection(path: path, flags: flags)) { error in
                XCTAssertFalse((error as? SQLiteError)?.isStorageUnavailable ?? true, "\(path): \(error)")
            }
        }
    }
}
