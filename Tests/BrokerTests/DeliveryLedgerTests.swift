@testable import Broker
import BusProtocol
import Configuration
import SQLite
import ShieldBusTestSupport
import XCTest
import ZeroMQ

/// The delivery ledger's queue (trimmed from the front without copying what stays) against a plain model: the
/// events kept for a plugin, each delivered or not, acknowledged cumulatively. Many seeded runs of random
/// routing, delivery, acknowledgements, process ends and discards.
final class DeliveryLedgerTests: XCTestCase {
    struct ModelEntry: Equatable {
        let seq: UInt64
        var delivered: Bool
        var endings: Int
    }

    /// The ledger's behaviour stated as simply as possible (the array code the queue replaced).
    struct Model {
        var entries: [String: [ModelEntry]] = [:]

        mutating func acknowledge(upTo seq: UInt64, by plugin: String) {
            entries[plugin]?.removeAll { $0.seq <= seq && $0.delivered }
        }

        mutating func processEnded(_ plugin: String, crashed: Bool) -> UInt64? {
            guard var list = entries[plugin] else { return nil }
            var abandoned: UInt64?
            if crashed, let inHand = list.firstIndex(where: \.delivered) {
                list[inHand].endings += 1
                if list[inHand].endings >= DeliveryLedger.endingsBeforeAbandoning { abandoned = list.remove(at: inHand).seq }
            }
            for index in list.indices { list[index].delivered = false }
            entries[plugin] = list
            return abandoned
        }
    }

    func testTheLedgerMatchesItsModelOverManyRandomRuns() {
        let plugins = ["app", "monitor", "reports"]
        for seed in UInt64(1)...60 {
            var random = SeededRandom(seed: seed)
            let limit = Int(random.next() % 200) + 5
            let ledger = DeliveryLedger(limit: limit, store: nil)
            var model = Model()
            var seq: UInt64 = 0
            for step in 0..<600 {
                let plugin = plugins[Int(random.next() % UInt64(plugins.count))]
                let context = "seed \(seed), step \(step), \(plugin)"
                switch random.next() % 100 {
                case 0..<45:
                    seq += 1
                    let overflow = ledger.route(seq: seq, envelope: EnvelopeFrame(Array("\(seq)".utf8)), to: plugin)
                    if (model.entries[plugin]?.count ?? 0) < limit {
                        XCTAssertNil(overflow, context)
                        model.entries[plugin, default: []].append(ModelEntry(seq: seq, delivered: false, endings: 0))
                    }
                case 45..<75:
                    // Mostly in order (the oldest not yet delivered), now and then any kept event.
                    let waiting = model.entries[plugin]?.filter { !$0.delivered } ?? []
                    guard let pick = random.next() % 5 == 0 ? waiting.randomElement(using: &random) : waiting.first else { continue }
                    ledger.markDelivered(seq: pick.seq, to: plugin)
                    if let index = model.entries[plugin]?.firstIndex(where: { $0.seq == pick.seq }) { model.entries[plugin]![index].delivered = true }
                case 75..<92:
                    let delivered = model.entries[plugin]?.filter(\.delivered).map(\.seq) ?? []
                    let upTo = delivered.randomElement(using: &random) ?? seq
                    ledger.acknowledge(upTo: upTo, by: plugin)
                    model.acknowledge(upTo: upTo, by: plugin)
                case 92..<99:
                    let crashed = random.next() % 2 == 0
                    XCTAssertEqual(ledger.processEnded(plugin, crashed: crashed)?.seq, model.processEnded(plugin, crashed: crashed), context)
                default:
                    ledger.discard(plugin)
                    model.entries[plugin] = nil
                }
                XCTAssertEqual(ledger.count(of: plugin), model.entries[plugin]?.count ?? 0, context)
                XCTAssertEqual(ledger.undelivered(of: plugin).map(\.seq), model.entries[plugin]?.filter { !$0.delivered }.map(\.seq) ?? [], context)
                XCTAssertEqual(ledger.undelivered(of: plugin).map { String(decoding: $0.json, as: UTF8.self) },
                               ledger.undelivered(of: plugin).map { "\($0.seq)" }, context)
            }
        }
    }

    /// A long backlog acknowledged one event at a time, as a plugin catching up does: every event leaves in order
    /// and what stays is exactly the rest.
    func testABacklogAcknowledgedOneByOneLeavesInOrder() {
        let ledger = DeliveryLedger(limit: 100_000, store: nil)
        for seq in UInt64(1)...20_000 {
            _ = ledger.route(seq: seq, envelope: EnvelopeFrame([]), to: "app")
            ledger.markDelivered(seq: seq, to: "app")
        }
        _ = ledger.processEnded("app", crashed: false)
        XCTAssertEqual(ledger.undelivered(of: "app").map(\.seq), Array(1...20_000))
        for seq in UInt64(1)...20_000 {
            ledger.markDelivered(seq: seq, to: "app")
            ledger.acknowledge(upTo: seq, by: "app")
            if seq % 1_000 == 0 {
                XCTAssertEqual(ledger.count(of: "app"), 20_000 - Int(seq))
                XCTAssertEqual(ledger.undelivered(of: "app").first?.seq, seq + 1 <= 20_000 ? seq + 1 : nil)
            }
        }
        XCTAssertEqual(ledger.count(of: "app"), 0)
    }

    /// An event kept at the front for long (its plugin away, or one in hand) while everything after it is delivered and
    /// acknowledged: the storage stays bounded by what is kept, not by everything delivered since. It held a hole per
    /// later delivery — the broker grew to 238 MiB over the benchmark's year and each acknowledgement walked them all.
    func testAnEventKeptAtTheFrontDoesNotKeepEveryHoleBehindIt() {
        let ledger = DeliveryLedger(limit: 100_000, store: nil)
        _ = ledger.route(seq: 1, envelope: EnvelopeFrame([]), to: "reports")  // never delivered: kept
        for seq in UInt64(2)...50_000 {
            _ = ledger.route(seq: seq, envelope: EnvelopeFrame([]), to: "reports")
            ledger.markDelivered(seq: seq, to: "reports")
            ledger.acknowledge(upTo: seq, by: "reports")
            XCTAssertLessThanOrEqual(ledger.storage(of: "reports"), 1_024, "after \(seq)")
            if ledger.storage(of: "reports") > 1_024 { break }
        }
        XCTAssertEqual(ledger.count(of: "reports"), 1)
        XCTAssertEqual(ledger.undelivered(of: "reports").map(\.seq), [1])
    }

    /// What a plugin published while handling a kept event is recognised when its next process sends it again —
    /// by cause, index, topic and body — and across a broker restart (the store); anything else is new. Many
    /// seeded runs: each publication is sent once, then the whole handling is sent again, sometimes changed.
    func testCopiesOfPublicationsAreRecognisedAcrossARestartAndNothingElseIs() throws {
        let directory = TemporaryDirectory(prefix: "ledger")
        defer { withExtendedLifetime(directory) {} }
        let folder = directory.path
        for seed in UInt64(1)...40 {
            var random = SeededRandom(seed: seed)
            let path = folder + "/bus-\(seed).sqlite"
            let json = Array(#"{"v":1}"#.utf8)
            let causes = (1...Int.random(in: 1...5, using: &random)).map { UInt64($0 * 10) }
            var made: [UInt64: [Publish]] = [:]
            do {  // the first broker, gone (its store closed) before the next opens it: one process holds it at a time
                let ledger = DeliveryLedger(limit: 100, store: try DeliveryStore(path: path))
                for cause in causes { XCTAssertNil(ledger.route(seq: cause, envelope: EnvelopeFrame(json), to: "app")) }
                for cause in causes {
                    made[cause] = (0..<Int.random(in: 0...4, using: &random)).map { n in
                        Publish(topic: "x.app.note", body: ["n": .int(Int64(n % 2))], cause: PublicationCause(seq: cause, index: n))
                    }
                    for publication in made[cause]! {
                        XCTAssertFalse(ledger.isRepeat(publication, cause: publication.cause!, by: "app"), "seed \(seed): the first time is new")
                    }
                }
                try ledger.save(lastSeq: 100, everySequenced: false, busTime: 0, timeAhead: nil, wallNow: 0)
            }
            // A restarted broker: the store's snapshot.
            let store = try DeliveryStore(path: path)
            let snapshot = try store.load()
            let restarted = DeliveryLedger(limit: 100, store: store)
            restarted.restore(snapshot.pending, published: snapshot.published)
            for cause in causes {
                for var publication in made[cause]! {
                    let changed = Bool.random(using: &random)
                    if changed { publication.body = Array(#"{"n":"other"}"#.utf8) }
                    XCTAssertEqual(restarted.isRepeat(publication, cause: publication.cause!, by: "app"), !changed,
                                   "seed \(seed): a copy is dropped, a changed publication is not")
                }
                // One more than the first handling made is new; and a publication of another plugin is its own.
                let extra = Publish(topic: "x.app.note", body: [:], cause: PublicationCause(seq: cause, index: made[cause]!.count))
                XCTAssertFalse(restarted.isRepeat(extra, cause: extra.cause!, by: "app"))
                XCTAssertFalse(restarted.isRepeat(extra, cause: extra.cause!, by: "monitor"))
            }
        }
    }

    /// A resumed journal keeps its whole lines up to the last saved sequence number, whatever follows: generated
    /// journals with a torn last line or none, cut at every saved number from before the first line to past the last.
    func testAResumedJournalIsCutBackToTheLastSave() throws {
        for seed in UInt64(1)...60 {
            var random = SeededRandom(seed: seed)
            var seq: UInt64 = UInt64.random(in: 0...5, using: &random)
            var lines: [(seq: UInt64, text: String)] = []
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                seq += UInt64.random(in: 1...3, using: &random)  // gaps, as after a restart's reservation
                let envelope = Envelope(seq: seq, time: Int64(seq) * 1_000, topic: "x.test.line", source: "broker", body: Array(#"{"k":"a\nb"}"#.utf8))
                lines.append((seq, String(decoding: WireCodec.encodeEnvelope(envelope), as: UTF8.self) + "\n"))
            }
            let torn = Bool.random(using: &random) ? #"{"v":1,"seq":9999,"ti"# : ""
            let written = Data((lines.map(\.text).joined() + torn).utf8)
            for saved in 0...(seq + 2) {
                let kept = lines.filter { $0.seq <= saved }.map(\.text).joined()
                XCTAssertEqual(Journal.end(of: written, keepingThrough: saved), kept.utf8.count, "seed \(seed), saved \(saved)")
            }
            XCTAssertEqual(Journal.end(of: written, keepingThrough: nil), written.count - torn.utf8.count, "seed \(seed): only the torn line without a save")
            // Reopened to resume, the journal says what it kept: what a resumed run's check reads (`whenJournalOpened`).
            let saved = UInt64.random(in: 0...(seq + 2), using: &random)
            let folder = TemporaryDirectory(prefix: "sbkept")
            let file = folder.file("journal.jsonl")
            try written.write(to: URL(fileURLWithPath: file))
            let reopened = try Journal(path: file, appending: true, keepingThrough: saved)
            XCTAssertEqual(reopened.kept, UInt64(lines.filter { $0.seq <= saved }.map(\.text).joined().utf8.count), "seed \(seed), saved \(saved)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: file)).count, Int(reopened.kept), "the file is cut back to what it kept")
            withExtendedLifetime(folder) {}
        }
    }

    /// Observers' held publications and the last saved number survive in bus.sqlite; a save without them keeps them.
    func testHeldPublicationsAreKeptAcrossARestart() throws {
        let directory = TemporaryDirectory(prefix: "sbheld")
        defer { withExtendedLifetime(directory) {} }
        let folder = directory.path
        let path = folder + "/bus.sqlite"
        let held = [DeliveryStore.Held(source: "reports", topic: "state.changed", body: Array(#"{"key":"a"}"#.utf8), corr: nil, deadline: nil),
                    DeliveryStore.Held(source: "notifier", topic: "x.notifier.note", body: Array("{}".utf8), corr: "c-1", deadline: 42)]
        // Each broker's store is closed before the next opens it (one process holds it at a time).
        do {
            let ledger = DeliveryLedger(limit: 100, store: try DeliveryStore(path: path))
            ledger.noteHeld(held)
            try ledger.save(lastSeq: 7, everySequenced: true, busTime: 0, timeAhead: nil, wallNow: 0)
            try ledger.save(lastSeq: 9, everySequenced: true, busTime: 0, timeAhead: nil, wallNow: 0)
        }
        do {
            let store = try DeliveryStore(path: path)
            let snapshot = try store.load()
            XCTAssertEqual(snapshot.held, held, "in order, every field")
            XCTAssertEqual(snapshot.savedSeq, 9)
            let ledger = DeliveryLedger(limit: 100, store: store)
            ledger.noteHeld([])
            try ledger.save(lastSeq: 9, everySequenced: true, busTime: 0, timeAhead: nil, wallNow: 0)
        }
        XCTAssertEqual(try DeliveryStore(path: path).load().held, [], "released")
    }

    /// An observer's held publication makes no transaction of its own when the loop keeps house: it is written with
    /// the next save, and never after the acknowledgement of the event it answers — here the acknowledgements'
    /// save a second on, which writes both.
    func testAHeldPublicationWaitsForTheNextSaveAndGoesInWithTheAcknowledgement() throws {
        let directory = TemporaryDirectory(prefix: "sbheldwait")
        defer { withExtendedLifetime(directory) {} }
        let folder = directory.path
        let store = try DeliveryStore(path: folder + "/bus.sqlite")
        let ledger = DeliveryLedger(limit: 100, store: store)
        XCTAssertNil(ledger.route(seq: 5, envelope: EnvelopeFrame(Array(#"{"seq":5}"#.utf8)), to: "reports"))
        ledger.markDelivered(seq: 5, to: "reports")
        try ledger.save(lastSeq: 5, everySequenced: true, busTime: 0, timeAhead: nil, wallNow: 0)
        XCTAssertEqual(try store.load().pending.map(\.seq), [5], "the delivered event is saved")

        let held = [DeliveryStore.Held(source: "reports", topic: "state.changed", body: Array(#"{"key":"a"}"#.utf8), corr: nil, deadline: nil)]
        ledger.noteHeld(held)
        try ledger.save(lastSeq: 5, everySequenced: true, busTime: 0, timeAhead: nil, wallNow: 10, publicationsMayWait: true)
        XCTAssertEqual(try store.load().held, [], "held, and not written on its own")

        ledger.acknowledge(upTo: 5, by: "reports")
        try ledger.save(lastSeq: 5, everySequenced: true, busTime: 0, timeAhead: nil, wallNow: 500, publicationsMayWait: true)
        var saved = try store.load()
        XCTAssertEqual(saved.held, [], "the acknowledgement is not due yet, and the publication waits with it")
        XCTAssertEqual(saved.pending.map(\.seq), [5])

        try ledger.save(lastSeq: 5, everySequenced: true, busTime: 0, timeAhead: nil, wallNow: 1_000, publicationsMayWait: true)
        saved = try store.load()
        XCTAssertEqual(saved.held, held, "written with the acknowledgement")
        XCTAssertEqual(saved.pending.map(\.seq), [], "acknowledged in the same save")

        ledger.noteHeld([])
        try ledger.save(lastSeq: 5, everySequenced: true, busTime: 0, timeAhead: nil, wallNow: 1_010)
        XCTAssertEqual(try store.load().held, [], "a batch's save writes what is held at once")
    }

    /// Each save writes the saved number and the reservations into the tally's row: what a restarted broker reads is
    /// what was last saved of each, and a failed save changes none of them.
    func testEachSaveLeavesTheLastSavedNumberAndReservationsForARestart() throws {
        let directory = TemporaryDirectory(prefix: "sbmeta")
        defer { withExtendedLifetime(directory) {} }
        let folder = directory.path
        let path = folder + "/bus.sqlite"
        // A save that reaches bus time 95 is refused at its row's update, after its pending event was written.
        _ = try DeliveryStore(path: path)
        try SQLiteConnection(path: path).execute("""
            CREATE TRIGGER refuse AFTER UPDATE ON commit_tally WHEN NEW.timeReserved = 95 BEGIN SELECT RAISE(ABORT, 'refused'); END;
            """)
        do {
            let store = try DeliveryStore(path: path)
            try store.write(inserts: [:], deletions: [], savedSeq: 1, seqReserved: 1_000, timeReserved: 50)
            try store.write(inserts: [:], deletions: [], savedSeq: 7, seqReserved: 1_000, timeReserved: 50)
            var snapshot = try store.load()
            XCTAssertEqual([snapshot.savedSeq, snapshot.lastSeq], [7, 1_000])
            XCTAssertEqual(snapshot.busTime, 50)
            try store.write(inserts: [:], deletions: [], savedSeq: 1_000, seqReserved: 2_000, timeReserved: 50)
            try store.write(inserts: [:], deletions: [], savedSeq: 1_001, seqReserved: 2_000, timeReserved: 90)
            // None of the failed batch stays, and the next save writes the numbers it is given over the last committed.
            XCTAssertThrowsError(try store.write(inserts: [DeliveryStore.Key(plugin: "app", seq: 3): Array("{}".utf8)], deletions: [],
                                                 savedSeq: 1_500, seqReserved: 3_000, timeReserved: 95))
            snapshot = try store.load()
            XCTAssertEqual([snapshot.savedSeq, snapshot.lastSeq], [1_001, 2_000], "the failed batch left nothing")
            XCTAssertEqual(snapshot.busTime, 90)
            XCTAssertEqual(snapshot.pending.count, 0)
            try store.write(inserts: [:], deletions: [], savedSeq: 1_002, seqReserved: 3_000, timeReserved: 90)
        }
        let snapshot = try DeliveryStore(path: path).load()
        XCTAssertEqual([snapshot.savedSeq, snapshot.lastSeq], [1_002, 3_000])
        XCTAssertEqual(snapshot.busTime, 90)
    }

    /// Past its checkpoint limit the store owes a checkpoint, which the broker runs at its loop's idle moment: the log
    /// is copied into the file (a copy of the file alone holds every save made before it), written again from its start,
    /// and every save stands.
    func testTheDeliveryStoreOwesACheckpointAtItsLimitAndLosesNoSave() throws {
        let directory = TemporaryDirectory(prefix: "sbcheckpoint")
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path + "/bus.sqlite", copy = directory.path + "/file-alone.sqlite"
        let limit = DeliveryStore.virtualTimeCheckpointLimit
        var saves: UInt64 = 0
        do {
            let store = try DeliveryStore(path: path, checkpointLimit: limit)
            XCTAssertEqual(store.checkpointLimit, limit)
            func save() throws {
                saves += 1
                try store.write(inserts: [DeliveryStore.Key(plugin: "app", seq: saves): Array(#"{"seq":\#(saves)}"#.utf8)],
                                deletions: saves > 1 ? [DeliveryStore.Key(plugin: "app", seq: saves - 1)] : [],
                                savedSeq: saves, seqReserved: 1_000_000, timeReserved: 0)
            }
            while !store.owesCheckpoint, saves < UInt64(limit) { try save() }
            XCTAssertTrue(store.owesCheckpoint, "every save writes at least one frame")
            XCTAssertGreaterThan(saves, 1)
            store.checkpointIfOwed()
            XCTAssertFalse(store.owesCheckpoint)
            let checkpointed = saves
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            let fileAlone = try SQLiteConnection(path: copy).prepare("SELECT value FROM meta WHERE key = 'savedSeq'")
            XCTAssertTrue(try fileAlone.step())
            XCTAssertEqual(try fileAlone.int64(at: 0), Int64(checkpointed), "the file holds every save before the checkpoint")
            for _ in 0..<10 { try save() }
            XCTAssertFalse(store.owesCheckpoint, "the log is written again from its start")
        }
        let snapshot = try DeliveryStore(path: path).load()
        XCTAssertEqual(snapshot.savedSeq, saves)
        XCTAssertEqual(snapshot.pending.map(\.seq), [saves])
    }

    /// A store made by the broker has its own page size; one made earlier with SQLite's default keeps it, and what it
    /// holds is read and written as before.
    func testANewStoreTakesItsPageSizeAndAnOlderOneKeepsItsOwn() throws {
        let directory = TemporaryDirectory(prefix: "sbpagesize")
        defer { withExtendedLifetime(directory) {} }
        func pageSize(_ path: String) throws -> Int64? {
            try SQLiteConnection(path: path).withStatement("PRAGMA page_size") { try $0.step() ? try $0.int64(at: 0) : nil }
        }
        let key = DeliveryStore.Key(plugin: "app", seq: 1), envelope = Array(#"{"seq":1}"#.utf8)
        let new = directory.path + "/bus.sqlite"
        try DeliveryStore(path: new).write(inserts: [key: envelope], deletions: [], savedSeq: 1, seqReserved: 100, timeReserved: 0)
        XCTAssertEqual(try pageSize(new), Int64(DeliveryStore.pageSize))
        let older = directory.path + "/older.sqlite"
        try SQLiteConnection(path: older).execute("CREATE TABLE made_earlier (n INTEGER)")
        try DeliveryStore(path: older).write(inserts: [key: envelope], deletions: [], savedSeq: 1, seqReserved: 100, timeReserved: 0)
        XCTAssertEqual(try pageSize(older), 4_096, "a store made earlier keeps its size")
        for path in [new, older] {
            let snapshot = try DeliveryStore(path: path).load()
            XCTAssertEqual(snapshot.pending.map(\.json), [envelope], path)
            XCTAssertEqual(snapshot.savedSeq, 1, path)
        }
    }

    /// A store written before the saved number and the reservations moved into the tally's row (a table `meta`, the
    /// count in a row of its own) opens with all it held: a restarted broker numbers on, resumes its clock, cuts its
    /// journal and redelivers as it would have, and its count of commits goes on from the file's. `meta` is then a view
    /// of the row — what a person reads there is current — which a broker from before cannot write: it refuses the
    /// store rather than number again from what it would no longer save.
    func testAStoreWrittenBeforeTheNumbersMovedOpensWithAllItHeld() throws {
        let directory = TemporaryDirectory(prefix: "sbmoved")
        defer { withExtendedLifetime(directory) {} }
        let path = directory.path + "/bus.sqlite"
        let envelope = Array(#"{"seq":41}"#.utf8)
        try SQLiteConnection(path: path).execute("""
            PRAGMA journal_mode = WAL;
            CREATE TABLE pending (plugin TEXT NOT NULL, seq INTEGER NOT NULL, envelope BLOB NOT NULL, PRIMARY KEY (plugin, seq)) WITHOUT ROWID;
            CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE commit_tally (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
            INSERT INTO pending VALUES ('app', 41, CAST('{"seq":41}' AS BLOB));
            INSERT INTO meta VALUES ('seqReserved', 1000), ('timeReserved', 777), ('savedSeq', 42);
            INSERT INTO commit_tally VALUES (1, 9);
            """)
        do {
            let store = try DeliveryStore(path: path)
            let snapshot = try store.load()
            XCTAssertEqual(snapshot.lastSeq, 1_000)
            XCTAssertEqual(snapshot.busTime, 777)
            XCTAssertEqual(snapshot.savedSeq, 42)
            XCTAssertEqual(snapshot.pending.map(\.seq), [41])
            XCTAssertEqual(snapshot.pending.map(\.json), [envelope])
            XCTAssertEqual(try store.commits(), 9, "moving the numbers and numbering the kept rows count no commit")
            try store.write(inserts: [:], deletions: [DeliveryStore.Key(plugin: "app", seq: 41)], savedSeq: 43, seqReserved: 1_000, timeReserved: 780)
            XCTAssertEqual(try store.commits(), 10)
        }
        let snapshot = try DeliveryStore(path: path).load()
        XCTAssertEqual([snapshot.savedSeq, snapshot.lastSeq], [43, 1_000])
        XCTAssertEqual(snapshot.busTime, 780)
        XCTAssertEqual(snapshot.pending.count, 0)
        let file = try SQLiteConnection(path: path)
        let meta = try file.prepare("SELECT key, value FROM meta")
        var rows: [String: Int64] = [:]
        while try meta.step() { rows[try XCTUnwrap(try meta.string(at: 0))] = try meta.int64(at: 1) }
        XCTAssertEqual(rows, ["savedSeq": 43, "seqReserved": 1_000, "timeReserved": 780])
        XCTAssertThrowsError(try file.prepare("UPDATE meta SET value = ? WHERE key = 'savedSeq'"), "a broker from before cannot write it")
        XCTAssertNoThrow(try file.prepare("SELECT row FROM pending"), "the kept rows numbered (DeliveryStoreRowsTests)")
    }

    /// A fresh store's numbers: none saved yet, as a restarted broker expects of a new device, and its count at 0.
    func testAFreshStoreHoldsNoNumbersAndNoCommits() throws {
        let directory = TemporaryDirectory(prefix: "sbfresh")
        defer { withExtendedLifetime(directory) {} }
        let store = try DeliveryStore(path: directory.path + "/bus.sqlite")
        let snapshot = try store.load()
        XCTAssertNil(snapshot.savedSeq)
        XCTAssertNil(snapshot.busTime)
        XCTAssertEqual(snapshot.lastSeq, 0)
        XCTAssertEqual(try store.commits(), 0)
    }

    /// An acknowledged event's publications are forgotten with it (a copy sent after that is new); events that
    /// published nothing leave the fingerprints of others as they were.
    func testAnAcknowledgedEventTakesItsPublicationsWithIt() throws {
        let directory = TemporaryDirectory(prefix: "sbforget")
        defer { withExtendedLifetime(directory) {} }
        let folder = directory.path
        let store = try DeliveryStore(path: folder + "/bus.sqlite")
        let ledger = DeliveryLedger(limit: 100, store: store)
        for seq: UInt64 in 1...3 {
            XCTAssertNil(ledger.route(seq: seq, envelope: EnvelopeFrame(Array(#"{"seq":\#(seq)}"#.utf8)), to: "app"))
            ledger.markDelivered(seq: seq, to: "app")
        }
        for seq: UInt64 in [1, 3] {
            XCTAssertFalse(ledger.isRepeat(Publish(topic: "x.app.did", body: Array("{}".utf8)), cause: PublicationCause(seq: seq, index: 0), by: "app"))
        }
        try ledger.save(lastSeq: 3, everySequenced: true, busTime: 0, timeAhead: nil, wallNow: 0)
        XCTAssertEqual(Set(try store.load().published.keys.map(\.seq)), [1, 3])

        ledger.acknowledge(upTo: 2, by: "app")
        try ledger.save(lastSeq: 3, everySequenced: true, busTime: 0, timeAhead: nil, wallNow: 1_000)
        let saved = try store.load()
        XCTAssertEqual(saved.pending.map(\.seq), [3])
        XCTAssertEqual(saved.published, [DeliveryStore.Key(plugin: "app", seq: 3): [DeliveryLedger.fingerprint(Publish(topic: "x.app.did", body: Array("{}".utf8)))]])
    }

    /// The broker keeps bus.sqlite to itself while it runs (no POSIX lock per transaction): a second opener is refused
    /// with an error naming the file, and the store opens again, with what was saved, once the first has closed it.
    func testTheDeliveryStoreIsOpenInOneProcessAtATime() throws {
        let directory = TemporaryDirectory(prefix: "sbexclusive")
        defer { withExtendedLifetime(directory) {} }
        let folder = directory.path
        let path = folder + "/bus.sqlite"
        do {
            let store = try DeliveryStore(path: path, busyTimeout: 0.05)
            try store.write(inserts: [DeliveryStore.Key(plugin: "app", seq: 3): Array("{}".utf8)], deletions: [], savedSeq: 3, seqReserved: 10, timeReserved: 0)
            XCTAssertThrowsError(try DeliveryStore(path: path, busyTimeout: 0.05)) { error in
                guard case .heldByAnotherConnection(let held, _)? = error as? SQLiteError else { return XCTFail("\(error)") }
                XCTAssertEqual(held, path)
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-shm"), "no shared-memory index: its locks are the process's own")
        }
        let snapshot = try DeliveryStore(path: path).load()
        XCTAssertEqual(snapshot.pending.map(\.seq), [3])
        XCTAssertEqual(snapshot.savedSeq, 3)
    }
}
