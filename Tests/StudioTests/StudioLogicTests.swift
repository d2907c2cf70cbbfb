import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime
@testable import Studio
import XCTest

/// The Studio's own logic without a browser: who may act, and the schedules' coming intervals.
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
}
