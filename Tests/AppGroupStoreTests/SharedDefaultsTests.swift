// Tests of SharedDefaults: typed values, versions, compare-and-set, transactions, decode failures, the change log.
import AppGroupStore
import Foundation
import SQLite
import XCTest

final class SharedDefaultsTests: ContainerTestCase {
    struct UnlockSession: Codable, Equatable {
        var isCurrentlyUnlocked: Bool
        var quotaEnd: Date
        var tokens: [String]
    }

    func testTypedRoundTrips() throws {
        let defaults = try adminDefaults()
        let session = UnlockSession(isCurrentlyUnlocked: true, quotaEnd: Date(timeIntervalSince1970: 1_700_000_900),
                                    tokens: ["a/b", "ü"])
        try defaults.set("focus", forKey: "string")
        try defaults.set(42, forKey: "int")
        try defaults.set(2.5, forKey: "double")
        try defaults.set(true, forKey: "bool")
        try defaults.set(Date(timeIntervalSince1970: 1_700_000_123.5), forKey: "date")
        try defaults.set(Data([0, 1, 2, 255]), forKey: "data")
        try defaults.set(["x", "y"], forKey: "array")
        try defaults.set(["b": 2, "a": 1], forKey: "dictionary")
        try defaults.set(session, forKey: "session")

        XCTAssertEqual(try defaults.string(forKey: "string"), "focus")
        XCTAssertEqual(try defaults.integer(forKey: "int"), 42)
        XCTAssertEqual(try defaults.double(forKey: "double"), 2.5)
        XCTAssertEqual(try defaults.double(forKey: "int"), 42, "an integer reads as a double")
        XCTAssertEqual(try defaults.bool(forKey: "bool"), true)
        XCTAssertEqual(try defaults.date(forKey: "date"), Date(timeIntervalSince1970: 1_700_000_123.5))
        XCTAssertEqual(try defaults.data(forKey: "data"), Data([0, 1, 2, 255]))
        XCTAssertEqual(try defaults.value([String].self, forKey: "array"), ["x", "y"])
        XCTAssertEqual(try defaults.value([String: Int].self, forKey: "dictionary"), ["a": 1, "b": 2])
        XCTAssertEqual(try defaults.value(UnlockSession.self, forKey: "session"), session)
        XCTAssertNil(try defaults.string(forKey: "missing"))
        XCTAssertNil(try defaults.integer(forKey: "missing"), "a missing key is nil, never 0")

        let entry = try XCTUnwrap(defaults.entry(forKey: "dictionary"))
        XCTAssertEqual(entry.rawJSON, #"{"a":1,"b":2}"#, "keys are sorted for deterministic bytes")
        XCTAssertEqual(entry.typeTag, "Dictionary<String, Int>")
        XCTAssertEqual(try defaults.entry(forKey: "session")?.typeTag, "UnlockSession")
        XCTAssertEqual(try defaults.entry(forKey: "date")?.rawJSON, "1700000123.5")
        XCTAssertEqual(try defaults.allKeys,
                       ["array", "bool", "data", "date", "dictionary", "double", "int", "session", "string"])
        XCTAssertEqual(try defaults.dictionaryRepresentation()["int"]?.rawJSON, "42")
    }

    /// The stored tag is the type's name as `String(describing:)` writes it (stores written before keep their tags).
    func testTypeTagsAreTheTypeNamesAsStringDescribingWritesThem() throws {
        let defaults = try adminDefaults()
        let session = UnlockSession(isCurrentlyUnlocked: false, quotaEnd: Date(timeIntervalSince1970: 0), tokens: [])
        try defaults.set([session], forKey: "sessions")
        try defaults.set(["today": [session]], forKey: "byDay")
        try defaults.set(Optional(3), forKey: "optional")
        try defaults.set(Set(["a"]), forKey: "set")
        try defaults.set([[1.5]], forKey: "nested")
        XCTAssertEqual(try defaults.entry(forKey: "sessions")?.typeTag, String(describing: [UnlockSession].self))
        XCTAssertEqual(try defaults.entry(forKey: "byDay")?.typeTag, String(describing: [String: [UnlockSession]].self))
        XCTAssertEqual(try defaults.entry(forKey: "optional")?.typeTag, String(describing: Int?.self))
        XCTAssertEqual(try defaults.entry(forKey: "set")?.typeTag, String(describing: Set<String>.self))
        XCTAssertEqual(try defaults.entry(forKey: "nested")?.typeTag, String(describing: [[Double]].self))
        XCTAssertEqual(try defaults.entry(forKey: "sessions")?.typeTag, "Array<UnlockSession>")
    }

    func testValuesAreSharedBetweenInstances() throws {
        try adminDefaults().set("shared", forKey: "greeting")
        let reader = try SharedDefaults(suiteName: group, container: container)
        XCTAssertEqual(try reader.string(forKey: "greeting"), "shared")
        assertStoreError(try reader.set("no", forKey: "greeting")) { error in
            guard case .readOnly(group) = error else { return XCTFail("unexpected \(error)") }
        }
    }

    /// A snapshot's reads are one state of the store: a write committed between two of them is read once it ends.
    func testASnapshotReadsOneStateOfTheStore() throws {
        let reader = try adminDefaults(), writer = try adminDefaults()
        try writer.set(1, forKey: "first")
        try writer.set(1, forKey: "second")
        let read = try reader.snapshot { snapshot -> [Int?] in
            let first = try snapshot.integer(forKey: "first")
            try writer.set(2, forKey: "second")
            return [first, try snapshot.integer(forKey: "second"), try snapshot.integer(forKey: "missing")]
        }
        XCTAssertEqual(read, [1, 1, nil], "the write between the two reads is not in the snapshot")
        XCTAssertEqual(try reader.integer(forKey: "second"), 2, "it is read once the snapshot ends")
        // Inside the same instance's write transaction, a snapshot reads what the transaction wrote so far.
        let inTransaction = try reader.transaction { transaction -> Int? in
            try transaction.set(3, forKey: "second")
            return try reader.snapshot { try $0.integer(forKey: "second") }
        }
        XCTAssertEqual(inTransaction.value, 3)
        XCTAssertEqual(try writer.integer(forKey: "second"), 3, "the snapshot inside it left the transaction to commit")
    }

    func testVersionsWriterAndTimeAreRecorded() throws {
        var now = busTime
        let defaults = try SharedDefaults(suiteName: group, container: container,
                                          writer: SharedDefaults.administrator, clock: { now })
        let first = try defaults.set(1, forKey: "counter")
        now += 60
        let second = try defaults.set(2, forKey: "counter")
        XCTAssertEqual(first.version, 1)
        XCTAssertEqual(second.version, 2)
        let entry = try XCTUnwrap(defaults.entry(forKey: "counter"))
        XCTAssertEqual(entry.key, "counter")
        XCTAssertEqual(entry.version, 2)
        XCTAssertEqual(entry.writer, SharedDefaults.administrator)
        XCTAssertEqual(entry.updatedAt, busTime + 60)

        let removal = try XCTUnwrap(defaults.removeObject(forKey: "counter"))
        XCTAssertEqual(removal.version, 3)
        XCTAssertTrue(removal.removed)
        XCTAssertNil(try defaults.entry(forKey: "counter"))
        XCTAssertNil(try defaults.removeObject(forKey: "counter"), "removing a missing key changes nothing")
        // A re-created key keeps counting, so an old version can never match again.
        XCTAssertEqual(try defaults.set(9, forKey: "counter").version, 4)
    }

    func testCompareAndSet() throws {
        let defaults = try adminDefaults()
        guard case .success(let created) = try defaults.compareAndSet("quotaEnd", expectedVersion: nil, newValue: 100) else {
            return XCTFail("creating a missing key with expectedVersion nil must succeed")
        }
        XCTAssertEqual(created.version, 1)
        XCTAssertEqual(try defaults.compareAndSet("quotaEnd", expectedVersion: nil, newValue: 200),
                       .conflict(currentVersion: 1))
        XCTAssertEqual(try defaults.compareAndSet("quotaEnd", expectedVersion: 7, newValue: 200),
                       .conflict(currentVersion: 1))
        XCTAssertEqual(try defaults.integer(forKey: "quotaEnd"), 100, "a conflict writes nothing")
        guard case .success(let updated) = try defaults.compareAndSet("quotaEnd", expectedVersion: 1, newValue: 200) else {
            return XCTFail("the expected version matched")
        }
        XCTAssertEqual(updated.version, 2)
        XCTAssertEqual(try defaults.integer(forKey: "quotaEnd"), 200)
        XCTAssertEqual(try defaults.compareAndSet("absent", expectedVersion: 1, newValue: 0), .conflict(currentVersion: nil))
    }

    func testConcurrentCompareAndSetLosesNoUpdate() throws {
        let threads = 4, increments = 50
        let failures = AtomicErrors()
        let openDefaults = adminDefaultsOpener()
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            do {
                // One instance (and connection) per thread, as separate extensions would have.
                let defaults = try openDefaults()
                var done = 0
                while done < increments {
                    let entry = try defaults.entry(forKey: "grace-uses")
                    let next = Int(entry?.rawJSON ?? "0")! + 1
                    if case .success = try defaults.compareAndSet("grace-uses", expectedVersion: entry?.version,
                                                                 newValue: next) {
                        done += 1
                    }
                }
            } catch {
                failures.append(error)
            }
        }
        XCTAssertEqual(failures.all.map { "\($0)" }, [])
        XCTAssertEqual(try adminDefaults().integer(forKey: "grace-uses"), threads * increments)
    }

    func testTransactionIsAtomicAndRollsBackOnError() throws {
        let defaults = try adminDefaults()
        try defaults.set(false, forKey: "isCurrentlyUnlocked")
        try defaults.set(0, forKey: "quotaEndTimestamp")
        struct Cancelled: Error {}
        XCTAssertThrowsError(try defaults.transaction { tx in
            try tx.set(true, forKey: "isCurrentlyUnlocked")
            XCTAssertEqual(try tx.bool(forKey: "isCurrentlyUnlocked"), true, "a transaction reads its own writes")
            try tx.set(1_700_000_600, forKey: "quotaEndTimestamp")
            throw Cancelled()
        }) { XCTAssertTrue($0 is Cancelled) }
        XCTAssertEqual(try defaults.bool(forKey: "isCurrentlyUnlocked"), false)
        XCTAssertEqual(try defaults.integer(forKey: "quotaEndTimestamp"), 0)
        XCTAssertEqual(try defaults.entry(forKey: "quotaEndTimestamp")?.version, 1)
        XCTAssertEqual(try defaults.changes(after: 0).count, 2, "a rolled-back transaction logs nothing")

        var announced: [[StoreChange]] = []
        defaults.onChange = { announced.append($0) }
        let result = try defaults.transaction { tx -> Int in
            try tx.set(true, forKey: "isCurrentlyUnlocked")
            try tx.set(1_700_000_600, forKey: "quotaEndTimestamp")
            return 7
        }
        XCTAssertEqual(result.value, 7)
        XCTAssertEqual(result.changes.map(\.key), ["isCurrentlyUnlocked", "quotaEndTimestamp"])
        XCTAssertEqual(announced, [result.changes], "onChange gets the committed changes once")
        XCTAssertEqual(try defaults.integer(forKey: "quotaEndTimestamp"), 1_700_000_600)
    }

    func testTransactionCannotBeUsedAfterItsClosureNorNested() throws {
        let defaults = try adminDefaults()
        var escaped: SharedDefaultsTransaction?
        try defaults.transaction { escaped = $0 }
        assertStoreError(try escaped?.set(1, forKey: "late")) { error in
            guard case .transactionClosed(group) = error else { return XCTFail("unexpected \(error)") }
        }
        assertStoreError(try defaults.transaction { _ in try defaults.set(1, forKey: "nested") }) { error in
            XCTAssertTrue("\(error)".contains("do not nest"), "\(error)")
        }
        XCTAssertNil(try defaults.entry(forKey: "nested"))
    }

    func testDecodeFailureThrowsAndLeavesTheValueUntouched() throws {
        let defaults = try adminDefaults()
        try defaults.set(["token-a", "token-b"], forKey: "globalSerializedTokens")
        let before = try XCTUnwrap(defaults.entry(forKey: "globalSerializedTokens"))
        let changesBefore = try defaults.lastChangeNumber()

        assertStoreError(try defaults.value([Int].self, forKey: "globalSerializedTokens")) { error in
            guard case .decodeFailed(let key, let expected, let stored, _) = error else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(key, "globalSerializedTokens")
            XCTAssertEqual(expected, "Array<Int>")
            XCTAssertEqual(stored, "Array<String>")
            XCTAssertTrue("\(error)".contains("left unchanged"))
        }
        assertStoreError(try defaults.integer(forKey: "globalSerializedTokens")) { error in
            guard case .decodeFailed = error else { return XCTFail("unexpected \(error)") }
        }
        assertStoreError(try defaults.transaction { try $0.data(forKey: "globalSerializedTokens") }) { error in
            guard case .decodeFailed = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertEqual(try defaults.entry(forKey: "globalSerializedTokens"), before, "byte for byte, same version")
        XCTAssertEqual(try defaults.lastChangeNumber(), changesBefore, "nothing was written")
    }

    /// A stored value that writes a key twice in one object — put there by a process writing the group's file itself,
    /// not through the API — is refused naming the key, never read as one of its two values.
    func testAStoredValueWithAKeyTwiceIsRefusedNamingIt() throws {
        let defaults = try adminDefaults()
        let session = UnlockSession(isCurrentlyUnlocked: false, quotaEnd: Date(timeIntervalSince1970: 1_700_000_900), tokens: [])
        try defaults.set(session, forKey: "session")
        let written = try SQLiteConnection(path: container.storeURL(forGroup: group).path)
        try written.execute(#"UPDATE entries SET json = '{"isCurrentlyUnlocked":false,"isCurrentlyUnlocked":true,"quotaEnd":1700000900,"tokens":[]}' WHERE key = 'session'"#)
        assertStoreError(try defaults.value(UnlockSession.self, forKey: "session")) { error in
            guard case .decodeFailed(let key, _, _, _) = error else { return XCTFail("unexpected \(error)") }
            XCTAssertEqual(key, "session")
            XCTAssertTrue("\(error)".contains("'isCurrentlyUnlocked' appears twice"), "\(error)")
        }
    }

    func testUnencodableValueWritesNothing() throws {
        let defaults = try adminDefaults()
        assertStoreError(try defaults.set(Double.nan, forKey: "ratio")) { error in
            guard case .encodeFailed(key: "ratio", type: "Double", _) = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertNil(try defaults.entry(forKey: "ratio"))
    }

    func testChangeLogFollowsCommitOrder() throws {
        let defaults = try adminDefaults()
        let written = [
            try defaults.set(1, forKey: "a"),
            try defaults.set(2, forKey: "b"),
            try XCTUnwrap(defaults.removeObject(forKey: "a")),
            try defaults.set(3, forKey: "b"),
        ]
        let log = try defaults.changes(after: 0)
        XCTAssertEqual(log, written)
        XCTAssertEqual(log.map(\.sequence), [1, 2, 3, 4])
        XCTAssertEqual(log.map(\.key), ["a", "b", "a", "b"])
        XCTAssertEqual(log.map(\.version), [1, 1, 2, 2])
        XCTAssertEqual(log.map(\.removed), [false, false, true, false])
        XCTAssertEqual(log.map(\.group), Array(repeating: group, count: 4))
        XCTAssertEqual(log.map(\.timestamp), Array(repeating: busTime, count: 4))
        XCTAssertEqual(try defaults.changes(after: 2, limit: 1).map(\.sequence), [3])
        XCTAssertEqual(try defaults.lastChangeNumber(), 4)
        XCTAssertEqual(try defaults.changes(after: 4), [])
    }

    /// The log keeps its last 10,000 changes (older ones go every 1,000), so a long run's store stays small; a
    /// follower within them misses nothing, and the numbers go on.
    func testTheChangeLogKeepsItsLatestChangesOnly() throws {
        let defaults = try adminDefaults()
        for value in 1...12_500 { try defaults.set(value, forKey: "count") }
        XCTAssertEqual(try defaults.lastChangeNumber(), 12_500)
        XCTAssertEqual(try defaults.changes(after: 0, limit: 1).map(\.sequence), [2_001], "pruned at 12,000: the 10,000 before it are kept")
        XCTAssertEqual(try defaults.changes(after: 12_490).map(\.sequence), Array(12_491...12_500), "a follower close behind misses nothing")
        XCTAssertEqual(try defaults.changes(after: 2_000, limit: 20_000).count, 10_500)
        XCTAssertEqual(try defaults.integer(forKey: "count"), 12_500, "the values are not touched")
    }
}

/// Collects errors from concurrent threads.
final class AtomicErrors: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Error] = []

    func append(_ error: Error) { lock.withLock { errors.append(error) } }
    var all: [Error] { lock.withLock { errors } }
}
