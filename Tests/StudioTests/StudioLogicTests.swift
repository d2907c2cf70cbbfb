import BusProtocol
import BusTools
import Configuration
import DeviceAPI
import Foundation
import ScreenTime
@testable import Studio
import ShieldBusTestSupport
import XCTest

/// The Studio's own logic without a browser: who may act, the schedules' coming intervals, and the journals it reads.
final class StudioLogicTests: XCTestCase {
    func testOnlyALoopbackPageWithoutAForeignOriginMayAct() {
        for authority in ["127.0.0.1:8080", "localhost:8080", "[::1]:8080", "127.0.0.1", "localhost"] {
            XCTAssertTrue(StudioServer.isFromLoopbackPage(authority: authority, origin: nil), authority)
            XCTAssertTrue(StudioServer.isFromLoopbackPage(authority: authority, origin: "http://127.0.0.1:8080"), authority)
            XCTAssertTrue(StudioServer.isFromLoopbackPage(authority: authority, origin: "http://localhost:8080"), authority)
            XCTAssertTrue(StudioServer.isFromLoopbackPage(authority: authority, origin: "http://[::1]:8080"), authority)
            for foreign in ["http://evil.example", "https://127.0.0.1.evil.example", "http://localhost.evil.example:8080", "null", "file://", "https://127.0.0.1:8080"] {
                XCTAssertFalse(StudioServer.isFromLoopbackPage(authority: authority, origin: foreign), "\(authority) from \(foreign)")
            }
        }
        // DNS rebinding: a foreign name that resolves to 127.0.0.1 arrives with that name as its Host.
        for host in ["evil.example:8080", "127.0.0.1.evil.example", "localhostx:8080", "", "10.0.0.1:8080"] {
            XCTAssertFalse(StudioServer.isFromLoopbackPage(authority: host, origin: nil), host)
        }
        XCTAssertFalse(StudioServer.isFromLoopbackPage(authority: nil, origin: nil))
    }

    /// Property: for a daily schedule, every 7 hours through a year (so at every hour of the day, DST changes
    /// included) the first interval the board gives contains that instant or is the next one, starts at the
    /// schedule's wall-clock time in the device's zone (by Foundation's Calendar), and the following ones start on
    /// consecutive days.
    /// A `shieldbus` copied without `ShieldBus_Studio.resources` is refused when the Studio starts, saying what to copy
    /// where, rather than stopped by `Bundle.module` at the page's first request.
    func testAProgramWithoutItsResourceBundleIsRefusedAtStartSayingWhatToCopy() throws {
        let bare = FileManager.default.temporaryDirectory.appendingPathComponent("studio-bare-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: bare, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: bare) }
        XCTAssertThrowsError(try StudioServer.resourcesFolder(programFolder: bare)) { error in
            let text = String(describing: error)
            XCTAssertTrue(text.contains("\(bare.path)/ShieldBus_Studio.resources/Resources cannot be read"), text)
            XCTAssertTrue(text.contains("copy the ShieldBus_Studio.resources folder"), text)
            XCTAssertTrue(text.contains("into \(bare.path)/"), text)
        }
        // Beside the test's program, as beside a built shieldbus: found, and it holds the page.
        let folder = try StudioServer.resourcesFolder()
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("index.html").path), folder.path)
    }

    func testADailyScheduleGivesTheNextIntervalsAtEveryHourOfAYear() throws {
        for zoneName in ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC"] {
            let zone = try XCTUnwrap(TimeZone(identifier: zoneName))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let registeredAt = DeviceAPI.busTime(try XCTUnwrap(calendar.date(from: DateComponents(year: 2026, month: 1, day: 1, hour: 12))))
            var board = ScheduleBoard(timeZone: zone)
            try register(&board, "daily", start: DateComponents(hour: 7, minute: 30), end: DateComponents(hour: 21, minute: 0), at: registeredAt)
            for hour in stride(from: 0, to: 366 * 24, by: 7) {
                let now = registeredAt + Int64(hour) * 3_600_000
                let schedules = try XCTUnwrap(board.snapshot(at: now).arrayValue)
                XCTAssertEqual(schedules.count, 1)
                let intervals = try XCTUnwrap(schedules[0]["intervals"]?.arrayValue)
                XCTAssertEqual(intervals.count, 8)
                let starts = intervals.compactMap { $0["start"]?.intValue }
                let ends = intervals.compactMap { $0["end"]?.intValue }
                XCTAssertTrue(ends[0] > now, "\(zoneName) at \(now): the first interval is not over")
                XCTAssertTrue(starts[0] <= now + 24 * 3_600_000, "\(zoneName) at \(now): the first interval is the next one")
                for (start, end) in zip(starts, ends) {
                    let local = calendar.dateComponents([.hour, .minute], from: DeviceAPI.date(busTime: start))
                    XCTAssertEqual([local.hour, local.minute], [7, 30], "\(zoneName): starts at 07:30 local")
                    XCTAssertEqual(calendar.dateComponents([.hour, .minute], from: DeviceAPI.date(busTime: end)).hour, 21)
                }
                for (earlier, later) in zip(starts, starts.dropFirst()) {
                    let days = calendar.dateComponents([.day], from: DeviceAPI.date(busTime: earlier), to: DeviceAPI.date(busTime: later)).day
                    XCTAssertEqual(days, 1, "\(zoneName): one interval a day")
                }
                XCTAssertEqual(schedules[0]["start"]?.stringValue, "07:30")
            }
        }
    }

    func testOnlySchedulesTheDeviceAcceptedAreShownAndAStopRemovesThem() throws {
        let zone = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        var board = ScheduleBoard(timeZone: zone)
        let now: BusTime = 1_795_388_400_000
        try register(&board, "accepted", start: DateComponents(hour: 0), end: DateComponents(hour: 23, minute: 59), at: now)
        try register(&board, "refused", start: DateComponents(hour: 0), end: DateComponents(hour: 23, minute: 59), at: now, accepted: false)
        XCTAssertEqual(board.snapshot(at: now).arrayValue?.compactMap { $0["activity"]?.stringValue }, ["accepted"])
        let stop = Envelope(seq: 10, time: now, topic: DeviceTopic.stopMonitoringRequest, source: "app", corr: "stop-1",
                            body: DeviceAPICoding.encode(StopMonitoring(activities: [DeviceActivityName("accepted")])))
        XCTAssertFalse(board.apply(stop), "nothing changes before the device answers")
        XCTAssertTrue(board.apply(reply(to: stop, ok: true)))
        XCTAssertEqual(board.snapshot(at: now).arrayValue, [])
    }

    /// Requests the OS never answered (its broker was killed between the two) are not kept for ever: past a bound the
    /// oldest go, and a broker's start forgets them all — while a recent request's answer still registers its schedule.
    func testUnansweredScheduleRequestsAreBounded() throws {
        let zone = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        var board = ScheduleBoard(timeZone: zone)
        let now: BusTime = 1_795_388_400_000
        let schedule = DeviceActivitySchedule(intervalStart: DateComponents(hour: 7), intervalEnd: DateComponents(hour: 21), repeats: true)
        func start(_ n: Int) -> Envelope {
            Envelope(seq: UInt64(n), time: now, topic: DeviceTopic.startMonitoringRequest, source: "app", corr: "start-\(n)",
                     body: DeviceAPICoding.encode(StartMonitoring(activity: DeviceActivityName("a\(n)"), schedule: schedule)))
        }
        func stop(_ n: Int) -> Envelope {
            Envelope(seq: UInt64(n), time: now, topic: DeviceTopic.stopMonitoringRequest, source: "app", corr: "stop-\(n)",
                     body: DeviceAPICoding.encode(StopMonitoring(activities: [DeviceActivityName("a\(n)")])))
        }
        for n in 0..<5_000 { _ = board.apply(start(n)); _ = board.apply(stop(n)) }
        let limit = PendingRequests<StartMonitoring>.limit
        XCTAssertEqual(board.pendingCount, 2 * limit, "5,000 unanswered starts and stops keep only the newest of each")
        XCTAssertFalse(board.apply(reply(to: start(0), ok: true)), "the oldest were let go: a late answer changes nothing")
        XCTAssertTrue(board.apply(reply(to: start(4_999), ok: true)), "a recent request's answer still registers it")
        XCTAssertEqual(board.snapshot(at: now).arrayValue?.compactMap { $0["activity"]?.stringValue }, ["a4999"])
        XCTAssertEqual(board.pendingCount, 2 * limit - 1)
        XCTAssertFalse(board.apply(reply(to: start(4_999), ok: true)), "answered once: a second reply is not another registration")
        _ = board.apply(Envelope(seq: 9_000, time: now, topic: "bus.started", source: "broker", body: Array("{}".utf8)))
        XCTAssertEqual(board.pendingCount, 0, "a restarted broker answers none of the last one's requests")
        XCTAssertFalse(board.apply(reply(to: stop(4_999), ok: true)))
        XCTAssertEqual(board.snapshot(at: now).arrayValue?.count, 1, "the schedule registered stays")
    }

    /// Across a broker restarted on its state, the events a live Studio did not see begin at the new run's first
    /// number: the numbers the last broker set aside between were never sent, and are not said to be missing.
    func testTheEventsNotSeenAcrossARestartBeginAtTheNewRunsFirstNumber() {
        func welcome(_ seq: UInt64, first: UInt64?) -> Welcome {
            Welcome(name: "studio", time: 0, seq: seq, clock: "real", heartbeatMilliseconds: 1000, firstSeq: first)
        }
        XCTAssertEqual(LiveBus.firstUnseen(after: 0, runFirstSeq: nil, welcome: welcome(2_050, first: 2_001)).seq, 1,
                       "a Studio that connects has seen nothing: the earlier runs' events are not shown either")
        let restarted = LiveBus.firstUnseen(after: 41, runFirstSeq: 1, welcome: welcome(1_046, first: 1_042))
        XCTAssertEqual(restarted.seq, 1_042)
        XCTAssertFalse(restarted.renumbered)
        XCTAssertEqual(LiveBus.firstUnseen(after: 41, runFirstSeq: 1, welcome: welcome(50, first: 1)).seq, 42, "the same run: all after it")
        XCTAssertEqual(LiveBus.firstUnseen(after: 41, runFirstSeq: nil, welcome: welcome(50, first: nil)).seq, 42, "a broker that does not say")
        let fresh = LiveBus.firstUnseen(after: 1_050, runFirstSeq: 1_042, welcome: welcome(1_060, first: 1))
        XCTAssertEqual(fresh.seq, 1)
        XCTAssertTrue(fresh.renumbered, "a new state folder numbers afresh, though its numbers passed the Studio's")
    }

    func testALookAtThePhoneTellsTheSchedulesAStudioMissed() throws {
        let zone = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        var board = ScheduleBoard(timeZone: zone)
        let now: BusTime = 1_795_388_400_000
        try register(&board, "gone", start: DateComponents(hour: 0), end: DateComponents(hour: 23, minute: 59), at: now)
        let look = DeviceLook(activities: [MonitoredSchedule(activity: DeviceActivityName("habit-lock.daily"),
                                                             schedule: DeviceActivitySchedule(intervalStart: DateComponents(hour: 7), intervalEnd: DateComponents(hour: 21), repeats: true),
                                                             registeredAt: DeviceAPI.date(busTime: now - 3_600_000))])
        let forged = Envelope(seq: 5, time: now, topic: DeviceTopic.lookReply, source: "impostor", corr: "studio-look",
                              body: DeviceAPICoding.encode(DeviceReply.success(DeviceLook())))
        XCTAssertFalse(board.apply(forged), "only the OS tells the schedules")
        let reply = Envelope(seq: 6, time: now, topic: DeviceTopic.lookReply, source: "broker", corr: "studio-look",
                             body: DeviceAPICoding.encode(DeviceReply.success(look)))
        XCTAssertTrue(board.apply(reply))
        let schedules = try XCTUnwrap(board.snapshot(at: now).arrayValue)
        XCTAssertEqual(schedules.compactMap { $0["activity"]?.stringValue }, ["habit-lock.daily"], "the OS's list replaces what the board had")
        XCTAssertEqual(schedules.first?["start"]?.stringValue, "07:00")
    }

    /// Property: whatever the ring's size and however many events came, a page that opens gets the newest ones in
    /// order, and is told exactly how many it does not get.
    func testTheFeedKeepsTheNewestEventsAndSaysHowManyItLetGo() throws {
        for capacity in [1, 2, 3, 7, 500, 501] {
            for count in [0, 1, capacity - 1, capacity, capacity + 1, 2 * capacity + 3, 1234] where count >= 0 {
                let feed = EventFeed(capacity: capacity)
                for index in 0..<count { feed.append(event: "{\"seq\":\(index)}") }
                let (backlog, _, stop) = feed.listen()
                defer { stop() }
                var seqs: [Int64] = [], dropped: Int64 = 0
                for chunk in backlog {
                    let message = try JSONValue(parsing: Array(try chunk().utf8))
                    dropped += message["dropped"]?.intValue ?? 0
                    seqs += message["events"]?.arrayValue?.compactMap { $0["seq"]?.intValue } ?? []
                }
                let kept = min(count, capacity)
                XCTAssertEqual(seqs, (count - kept..<count).map(Int64.init), "capacity \(capacity), \(count) events")
                XCTAssertEqual(dropped, Int64(count - kept), "capacity \(capacity), \(count) events")
                XCTAssertEqual(feed.counts.seen, count)
                XCTAssertEqual(feed.counts.kept, kept)
            }
        }
    }

    /// Property: any range of a recorded journal read back from its file is what narrating the whole journal from
    /// its start gives for it (the schedules' state included, across checkpoints), and the Studio keeps none of it.
    func testAJournalReadBackOnDemandEqualsTheWholeNarration() throws {
        let zone = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        let count = RecordedJournal.checkpointInterval * 2 + 345
        var envelopes: [Envelope] = []
        var time: BusTime = 1_795_388_400_000
        for seq in 1...count {
            time += 61_000
            if seq % 400 == 1 {
                let schedule = DeviceActivitySchedule(intervalStart: DateComponents(hour: seq % 24), intervalEnd: DateComponents(hour: 23, minute: 59), repeats: seq % 800 == 1)
                let request = Envelope(seq: UInt64(seq), time: time, topic: DeviceTopic.startMonitoringRequest, source: "app", corr: "start-\(seq)",
                                       body: DeviceAPICoding.encode(StartMonitoring(activity: DeviceActivityName("activity-\(seq % 3)"), schedule: schedule)))
                envelopes.append(request)
            } else if seq % 400 == 2 {
                envelopes.append(reply(to: Envelope(seq: UInt64(seq - 1), time: time, topic: DeviceTopic.startMonitoringRequest, source: "app",
                                                    corr: "start-\(seq - 1)", body: Array("{}".utf8)), ok: true))
            } else {
                envelopes.append(Envelope(seq: UInt64(seq), time: time, topic: "app.ping", source: "app", body: Array("{\"n\":\(seq)}".utf8)))
            }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("studio-journal-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let lines = envelopes.map { String(decoding: WireCodec.encodeEnvelope($0), as: UTF8.self) }
        try (lines.joined(separator: "\n") + "\n\n").write(to: file, atomically: true, encoding: .utf8)

        var narrator = EventNarrator(timeZone: zone)
        let whole = envelopes.enumerated().map { narrator.narrate($1, index: $0) }
        // Told how far it got as it reads (here at every look at the clock): a journal of a few MB takes seconds.
        var told: [Int] = []
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int)
        let journal = try RecordedJournal(path: file.path, timeZone: zone, progressEvery: 0) { read, of in
            XCTAssertEqual(of, size)
            told.append(read)
        }
        XCTAssertEqual(told.count, count / RecordedJournal.progressLines, "a report every \(RecordedJournal.progressLines) lines read: \(told)")
        XCTAssertEqual(told, told.sorted())
        XCTAssertTrue(told.allSatisfy { $0 > 0 && $0 < size }, "\(told) of \(size)")
        XCTAssertEqual(journal.count, count)
        var generator = SystemRandomNumberGenerator()
        var ranges = [0..<count, 0..<0, count - 1..<count, 999..<1001, 1000..<1000 + 500]
        for _ in 0..<12 {
            let lower = Int.random(in: 0..<count, using: &generator)
            ranges.append(lower..<Int.random(in: lower...min(count, lower + 700), using: &generator))
        }
        for range in ranges { XCTAssertEqual(try journal.events(in: range), Array(whole[range]), "\(range)") }

        let feed = EventFeed(capacity: 10, journal: journal)
        let (backlog, _, stop) = feed.listen()
        defer { stop() }
        XCTAssertEqual(backlog.count, (count + EventFeed.chunkSize - 1) / EventFeed.chunkSize)
        XCTAssertEqual(feed.counts.kept, 0, "a journal's events are read from its file, not kept")
        XCTAssertEqual(feed.counts.seen, count)

        try "{\"not\": an envelope}\n".write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try RecordedJournal(path: file.path, timeZone: zone)) { error in
            guard case StudioError.badJournalLine(let path, 1, _)? = error as? StudioError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, file.path)
        }
    }

    /// `--at` an event the journal does not have is refused in words, not opened somewhere else; one it has is taken.
    func testOpeningAtAnEventTheJournalDoesNotHaveIsRefused() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("studio-at-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let lines = (1...5).map { seq in
            String(decoding: WireCodec.encodeEnvelope(Envelope(seq: UInt64(seq), time: 1_795_388_400_000 + Int64(seq), topic: "app.ping", source: "app",
                                                               body: Array("{}".utf8))), as: UTF8.self)
        }
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let zone = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        func studio(at seq: UInt64) throws -> StudioServer {
            try StudioServer(source: .journal(path: file.path, timeZone: zone), port: 0, homeScreen: [], iconDirectories: [], openAt: seq)
        }
        XCTAssertNoThrow(try studio(at: 3))
        XCTAssertThrowsError(try studio(at: 6)) { error in
            XCTAssertEqual(error as? StudioError, .noEvent(seq: 6, path: file.path))
            XCTAssertEqual("\(error)", "--at 6: the journal \(file.path) has no event #6 (`shieldbus check` prints an --at for each violation it finds)")
        }
    }

    /// Property: the history a Studio reads from a live journal is every event after the feed's newest through the
    /// tap's welcome, once and in order — never a line past the welcome (the tap delivers it), nor the half of a line
    /// the broker is still writing; and lines the broker flushes while the Studio waits for them are taken.
    func testTheHistoryIsTheJournalFromTheFeedsNewestToTheWelcome() throws {
        let lines = (1...300).map { seq in
            WireCodec.encodeEnvelope(Envelope(seq: UInt64(seq), time: 1_795_388_400_000 + Int64(seq), topic: "app.ping", source: "app",
                                              body: Array("{\"n\":\(seq)}".utf8))) + [0x0A]
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("studio-history-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        for _ in 0..<60 {
            let written = Int.random(in: 0...lines.count)
            let after = UInt64.random(in: 0...300), through = UInt64.random(in: 0...300)
            // The whole lines written, and half of the next one (the broker mid-write).
            try Data(lines[..<written].joined() + (written < lines.count ? lines[written].prefix(lines[written].count / 2) : [])).write(to: file)
            var taken: [UInt64] = []
            let reached = try JournalHistory.read(path: file.path, after: after, through: through, patienceMilliseconds: 0) { taken.append($0.seq) }
            let last = min(through, UInt64(written))
            let expected = after < last ? Array(after + 1...last) : []
            XCTAssertEqual(taken, expected, "after \(after) through \(through) with \(written) lines written")
            XCTAssertEqual(reached, expected.last ?? after)
        }

        // The welcome is ahead of the file: the read waits for the broker's next flush (the rest, from another thread).
        let half = lines[100].count / 2
        try Data(lines[..<100].joined() + lines[100].prefix(half)).write(to: file)
        let writer = try FileHandle(forWritingTo: file)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) {
            _ = try? writer.seekToEnd()
            try? writer.write(contentsOf: Data(lines[100].dropFirst(half) + lines[101...].joined()))
            try? writer.close()
        }
        var taken: [UInt64] = []
        let reached = try JournalHistory.read(path: file.path, after: 50, through: 200, patienceMilliseconds: 10_000) { taken.append($0.seq) }
        XCTAssertEqual(taken, Array(51...200))
        XCTAssertEqual(reached, 200)
    }

    private func register(_ board: inout ScheduleBoard, _ name: String, start: DateComponents, end: DateComponents, at time: BusTime,
                          accepted: Bool = true) throws {
        let schedule = DeviceActivitySchedule(intervalStart: start, intervalEnd: end, repeats: true)
        let request = Envelope(seq: 1, time: time, topic: DeviceTopic.startMonitoringRequest, source: "app", corr: "start-\(name)",
                               body: DeviceAPICoding.encode(StartMonitoring(activity: DeviceActivityName(name), schedule: schedule)))
        XCTAssertFalse(board.apply(request))
        XCTAssertEqual(board.apply(reply(to: request, ok: accepted)), accepted)
    }

    private func reply(to request: Envelope, ok: Bool) -> Envelope {
        let body: JSONValue = ok ? ["ok": true, "value": [:]] : ["ok": false, "error": ["code": "interval-too-short", "message": "no"]]
        return Envelope(seq: request.seq + 1, time: request.time, topic: Topic.reply(to: request.topic), source: "broker",
                        corr: request.corr, body: Array(body.jsonText.utf8))
    }

    /// What a replaying page asks of a journal it does not hold, as a property over a generated journal with random
    /// shields, errors and pings: where the next and previous event of a kind is, how many events lie at or before an
    /// instant, an event by seq, the timeline's lines and the filtered bus's before an instant, the markers' columns
    /// and the next local time of day — each equal to looking through the whole journal.
    func testAJournalsEventsAreFoundWithoutHoldingThem() throws {
        let zone = TimeZone(identifier: "Europe/Berlin")!
        var generator = SystemRandomNumberGenerator()
        var envelopes: [Envelope] = []
        var time: BusTime = 1_795_388_400_000
        for seq in 1...3_456 {
            time += Int64.random(in: 0...600_000, using: &generator)
            let (topic, source) = [("shield.shown", "broker"), ("bus.error", "broker"), ("app.ping", "app"), ("app.pong", "other"), ("app.ping", "other")]
                .randomElement(using: &generator)!
            envelopes.append(Envelope(seq: UInt64(seq), time: time, topic: topic, source: source, body: Array("{\"n\":\(seq)}".utf8)))
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("studio-journal-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        try (envelopes.map { String(decoding: WireCodec.encodeEnvelope($0), as: UTF8.self) }.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let journal = try RecordedJournal(path: file.path, timeZone: zone)
        let kinds = ["shield.shown": "SHIELD", "bus.error": "ERROR"]
        XCTAssertEqual(journal.storyCounts, Dictionary(grouping: envelopes.compactMap { kinds[$0.topic] }, by: { $0 }).mapValues(\.count))
        func indices(_ text: [String]) throws -> [Int] { try text.map { Int(try XCTUnwrap(JSONValue(parsing: $0)["index"]?.intValue)) } }

        for _ in 0..<60 {
            let count = Int.random(in: 0...envelopes.count, using: &generator)
            for (topic, kind) in kinds {
                XCTAssertEqual(journal.story(ofKind: kind, from: count - 1, step: 1), envelopes.indices.first { $0 > count - 1 && envelopes[$0].topic == topic })
                XCTAssertEqual(journal.story(ofKind: kind, from: count - 1, step: -1), envelopes.indices.last { $0 < count - 1 && envelopes[$0].topic == topic })
            }
            let instant = envelopes[Int.random(in: 0..<envelopes.count, using: &generator)].time + Int64.random(in: -1...1, using: &generator)
            XCTAssertEqual(journal.count(atOrBefore: instant), envelopes.filter { $0.time <= instant }.count)
            XCTAssertEqual(try indices(journal.stories(before: count, limit: 7)), Array(envelopes.indices.filter { $0 < count && kinds[envelopes[$0].topic] != nil }.suffix(7)))
            let found = try journal.matching(before: count, prefix: "app.p", source: "other", limit: 9, scanLimit: 500)
            let expected = envelopes.indices.filter { $0 < count && $0 >= count - 500 && envelopes[$0].topic.hasPrefix("app.p") && envelopes[$0].source == "other" }.suffix(9)
            XCTAssertEqual(try indices(found.events), Array(expected), "before \(count)")
            XCTAssertEqual(found.complete, expected.count < 9 && count <= 500)
            let from = Int.random(in: 0..<envelopes.count, using: &generator), to = Int.random(in: from + 1...envelopes.count, using: &generator)
            XCTAssertEqual(journal.marks(in: from..<to, columns: 37)["ERROR"] ?? [],
                           Array(Set((from..<to).filter { envelopes[$0].topic == "bus.error" }.map { ($0 - from) * 37 / (to - from) })).sorted())
        }
        for index in [0, 1, 999, 1000, 2345, envelopes.count - 1] { XCTAssertEqual(try journal.index(ofSeq: envelopes[index].seq), index) }
        XCTAssertNil(try journal.index(ofSeq: 99_999))

        // The next 07:30 in the journal's zone: on the day shown when still to come, else on the next day with events.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        for _ in 0..<30 {
            let count = Int.random(in: 1...envelopes.count, using: &generator)
            let shown = Date(timeIntervalSince1970: Double(envelopes[count - 1].time) / 1000)
            var target = calendar.date(bySettingHour: 7, minute: 30, second: 0, of: shown)!.addingTimeInterval(0.999)
            if target < shown {
                let tomorrow = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: shown))!
                guard let next = envelopes.first(where: { Double($0.time) / 1000 >= tomorrow.timeIntervalSince1970 }) else {
                    XCTAssertNil(journal.count(atNext: DateComponents(hour: 7, minute: 30, second: 0), after: count))
                    continue
                }
                target = calendar.date(bySettingHour: 7, minute: 30, second: 0, of: Date(timeIntervalSince1970: Double(next.time) / 1000))!.addingTimeInterval(0.999)
            }
            XCTAssertEqual(journal.count(atNext: DateComponents(hour: 7, minute: 30, second: 0), after: count),
                           envelopes.filter { Double($0.time) / 1000 <= target.timeIntervalSince1970 + 0.0001 }.count, "after \(count)")
        }
    }

    /// "Save as scenario": every action `shieldbus do` names, asked through its input request, becomes a step the
    /// scenario parser reads back as the action the device performs for that request; a refused request is left out,
    /// one still being handled at the end is kept, and each step is timed from the journal's first event.
    func testThePersonsActionsBecomeAScenarioThatReadsBackAsTheSameActions() throws {
        let catalog = try AppCatalog.load(path: BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)
        let zone = TimeZone(identifier: "Europe/Berlin")!
        let asked: [(verb: String, value: String?, tab: Int, isPrivate: Bool, action: ScenarioAction?)] = [
            ("open", "Instagram", 1, false, .open(app: try catalog.requireApp(named: "Instagram"))),
            ("close", nil, 1, false, .close(app: nil)),
            ("close", "Maps", 1, false, .close(app: try catalog.requireApp(named: "Maps"))),
            ("home", nil, 1, false, nil),  // refused below
            ("visit", "https://www.reddit.com/r/swift?q=\"a b\"", 2, true, .visit(url: "https://www.reddit.com/r/swift?q=\"a b\"", host: "www.reddit.com", tab: 2, isPrivate: true)),
            ("switch-tab", nil, 2, false, .switchTab(2)), ("close-tab", nil, 2, false, .closeTab(2)),
            ("press", "secondary", 1, false, .press(button: .secondary)), ("habit", "Read \"10\" pages", 1, false, .habit("Read \"10\" pages")),
            ("app-action", "skip-tonight", 1, false, .appAction(app: nil, action: "skip-tonight")), ("restart", nil, 1, false, .restart),
            ("force-quit", "Habit Lock", 1, false, .forceQuit(app: try catalog.requireApp(named: "Habit Lock"))), ("os-update", nil, 1, false, .osUpdate),
            ("notification-tap", "n-1", 1, false, .tapNotification(id: "n-1")), ("notification-tap", nil, 1, false, .tapNotification(id: nil)),
            ("authorize", "revoke", 1, false, .authorize(.revoked)), ("set-clock", "+2h", 1, false, .setClock(try ClockSetting(parsing: "+2h"))),
            ("set-clock", "2026-11-24T09:00", 1, false, .setClock(try ClockSetting(parsing: "2026-11-24T09:00"))),
            ("time-zone", "America/New_York", 1, false, .setTimeZone("America/New_York")),
            ("crash-broker", nil, 1, false, .crashBroker),  // still being handled when the journal ends
        ]
        var saved = SavedScenario()
        let start: BusTime = 1_795_420_800_250
        saved.read(Envelope(seq: 1, time: start, topic: "bus.started", source: "broker", body: Array("{}".utf8)))
        for (number, step) in asked.enumerated() {
            let input = try PersonInput(action: step.verb, value: step.value, tab: step.tab, isPrivate: step.isPrivate)
            let time = start + Int64(number + 1) * 90_000, seq = UInt64(2 + 2 * number)
            saved.read(Envelope(seq: seq, time: time, topic: "input.\(input.verb).request", source: "studio", corr: "c\(number)", body: input.body.jsonBytes))
            guard number < asked.count - 1 else { continue }
            let answer = step.action == nil ? #"{"ok":false,"error":{"code":"refused","message":"no"}}"# : #"{"ok":true}"#
            saved.read(Envelope(seq: seq + 1, time: time + 10, topic: "input.\(input.verb).reply", source: "broker", corr: "c\(number)", body: Array(answer.utf8)))
        }
        let text = saved.text(name: "saved", timeZone: zone, comment: "a test")
        let scenario = try Scenario.parse(YAMLValue.parse(text, file: "saved.yml"), catalog: catalog, defaultTimeZone: zone)
        XCTAssertEqual(saved.count, asked.count - 1)
        XCTAssertEqual(scenario.steps.map { $0.action }, asked.compactMap { $0.action }, text)
        let times = asked.indices.filter { asked[$0].action != nil }.map { Double(start - 250) / 1000 + Double($0 + 1) * 90 }
        XCTAssertEqual(scenario.steps.map { $0.time.timeIntervalSince1970 }, times, text)
        XCTAssertEqual(scenario.start.timeIntervalSince1970, Double(start - 250) / 1000, "a scenario starts on a whole second")
        XCTAssertTrue(text.contains("  - after: 1m30s\n    open: \"Instagram\""), text)
        XCTAssertEqual(SavedScenario().count, 0, "an empty journal saves nothing")
    }
}
