// Tests of a new store's making: whole, in WAL mode, under its name only once made; a file already there untouched.
import Foundation
import SQLite
import ShieldBusTestSupport
import XCTest

final class StoreCreationTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-creation-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func single<T>(_ connection: SQLiteConnection, _ sql: String, _ read: (Statement) throws -> T?) throws -> T? {
        try connection.withStatement(sql) { try $0.step() ? try read($0) : nil }
    }

    /// A store made where none was is in WAL mode with its page size, schema and version, passes its check, and is
    /// the only file left in its folder: no scratch file, log or index beside it.
    func testANewStoreIsMadeWholeInWALModeAndAloneInItsFolder() throws {
        let store = path("made.sqlite")
        XCTAssertTrue(try StoreCreation.makeIfMissing(at: store, pageSize: 2_048, schema: """
            CREATE TABLE IF NOT EXISTS t (v INTEGER); CREATE INDEX IF NOT EXISTS t_v ON t (v); PRAGMA user_version = 3;
            """))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["made.sqlite"])
        let opened = try SQLiteConnection(path: store, flags: [.readWrite])
        XCTAssertEqual(try single(opened, "PRAGMA journal_mode") { try $0.string(at: 0) }, "wal")
        XCTAssertEqual(try single(opened, "PRAGMA page_size") { try $0.int64(at: 0) }, 2_048)
        XCTAssertEqual(try opened.userVersion(), 3)
        XCTAssertEqual(try single(opened, "SELECT count(*) FROM sqlite_master WHERE name IN ('t', 't_v')") { try $0.int64(at: 0) }, 2)
        XCTAssertEqual(try opened.quickCheck(), [])
        try opened.execute("INSERT INTO t VALUES (1)")
        XCTAssertEqual(try single(opened, "SELECT sum(v) FROM t") { try $0.int64(at: 0) }, 1)
    }

    /// A store of a remembered recipe is written from the remembered bytes: the same file, byte for byte, as one
    /// built; sound, in WAL mode, usable, and alone in its folder. A recipe not remembered is still built.
    func testAStoreOfARememberedRecipeIsTheSameFileAsOneBuilt() throws {
        // A schema of this test's own: what a process remembers stays for its life.
        let schema = "CREATE TABLE IF NOT EXISTS remembered_\(UInt32.random(in: 0...UInt32.max)) (v INTEGER); PRAGMA user_version = 2;"
        let built = path("built.sqlite"), written = path("written.sqlite"), other = path("other.sqlite")
        XCTAssertTrue(try StoreCreation.makeIfMissing(at: built, pageSize: 2_048, schema: schema))
        try StoreCreation.remember(pageSize: 2_048, schema: schema, in: directory.path)
        XCTAssertTrue(try StoreCreation.makeIfMissing(at: written, pageSize: 2_048, schema: schema))
        XCTAssertTrue(try StoreCreation.makeIfMissing(at: other, pageSize: 4_096, schema: schema))
        let builtBytes = try XCTUnwrap(FileManager.default.contents(atPath: built))
        XCTAssertEqual(FileManager.default.contents(atPath: written), builtBytes)
        XCTAssertNotEqual(FileManager.default.contents(atPath: other), builtBytes, "another page size is another recipe")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["built.sqlite", "other.sqlite", "written.sqlite"])
        let opened = try SQLiteConnection(path: written, flags: [.readWrite])
        XCTAssertEqual(try single(opened, "PRAGMA journal_mode") { try $0.string(at: 0) }, "wal")
        XCTAssertEqual(try single(opened, "PRAGMA page_size") { try $0.int64(at: 0) }, 2_048)
        XCTAssertEqual(try opened.userVersion(), 2)
        XCTAssertEqual(try opened.quickCheck(), [])
    }

    /// A file already at the path — a store with rows, or one that is not a database at all — is left exactly as it is
    /// (its opener judges it), and nothing is left beside it.
    func testAFileAlreadyThereIsLeftAsItIs() throws {
        let store = path("kept.sqlite"), garbage = path("garbage.sqlite")
        do {
            let kept = try SQLiteConnection(path: store)
            try kept.execute("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (7)")
        }
        let bytes = Data("not a database, whatever it is".utf8)
        try bytes.write(to: URL(fileURLWithPath: garbage))
        XCTAssertFalse(try StoreCreation.makeIfMissing(at: store, schema: "CREATE TABLE IF NOT EXISTS u (w INTEGER)"))
        XCTAssertFalse(try StoreCreation.makeIfMissing(at: garbage, schema: "CREATE TABLE IF NOT EXISTS u (w INTEGER)"))
        XCTAssertEqual(FileManager.default.contents(atPath: garbage), bytes)
        let opened = try SQLiteConnection(path: store, flags: [.readWrite])
        XCTAssertEqual(try single(opened, "SELECT v FROM t") { try $0.int64(at: 0) }, 7)
        XCTAssertEqual(try single(opened, "SELECT count(*) FROM sqlite_master WHERE name = 'u'") { try $0.int64(at: 0) }, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["garbage.sqlite", "kept.sqlite"])
    }

    /// A store's folder may be reached through a symbolic link (a state folder under a linked home): the store is made
    /// in the folder the link leads to. Only a link in place of the scratch file itself, or of a folder put there while
    /// it is made, is refused.
    func testAStoreIsMadeThroughALinkedFolder() throws {
        try FileManager.default.createDirectory(atPath: path("real"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: path("linked"), withDestinationPath: path("real"))
        XCTAssertTrue(try StoreCreation.makeIfMissing(at: path("linked") + "/made.sqlite", schema: "CREATE TABLE IF NOT EXISTS t (v INTEGER)"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: path("real")), ["made.sqlite"])
        XCTAssertEqual(try SQLiteConnection(path: path("linked") + "/made.sqlite", flags: [.readWrite]).quickCheck(), [])
    }

    /// A scratch file another making left (cut short by a power cut) is neither taken for the store nor built over.
    func testAScratchFileLeftByACutShortMakingIsNotTaken() throws {
        let store = path("again.sqlite"), left = path("again.sqlite.making-1")
        try Data("half a store".utf8).write(to: URL(fileURLWithPath: left))
        XCTAssertTrue(try StoreCreation.makeIfMissing(at: store, schema: "CREATE TABLE IF NOT EXISTS t (v INTEGER)"))
        XCTAssertEqual(try SQLiteConnection(path: store, flags: [.readWrite]).quickCheck(), [])
        XCTAssertEqual(FileManager.default.contents(atPath: left), Data("half a store".utf8))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["again.sqlite", "again.sqlite.making-1"])
    }

    /// A schema that fails leaves no store and no scratch file: the next open finds nothing half made.
    func testASchemaThatFailsLeavesNothing() throws {
        let store = path("failed.sqlite")
        XCTAssertThrowsError(try StoreCreation.makeIfMissing(at: store, schema: "CREATE TABLE t (v INTEGER); CREATE TABLE t (v INTEGER)"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [])
    }

    /// A store that cannot be made on a read-only file system is the storage refusing (which a plugin waits out).
    func testAStoreThatCannotBeMadeOnAReadOnlyFileSystemIsStorageUnavailable() throws {
        let disk = try SmallDisk(size: "1m")
        try disk.remount(readOnly: true)
        XCTAssertThrowsError(try StoreCreation.makeIfMissing(at: disk.path + "/new.sqlite", schema: "CREATE TABLE t (v INTEGER)")) { error in
            XCTAssertTrue((error as? SQLiteError)?.isStorageUnavailable ?? false, "\(error)")
        }
    }
}
