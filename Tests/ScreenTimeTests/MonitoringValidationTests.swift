import XCTest
@testable import ScreenTime

final class MonitoringValidationTests: XCTestCase {
    typealias Failure = DeviceActivityMonitoringError
    let now = utc("2026-06-10T12:00:00Z")

    func schedule(_ start: DateComponents, _ end: DateComponents, warning: DateComponents? = nil) -> DeviceActivitySchedule {
        DeviceActivitySchedule(intervalStart: start, intervalEnd: end, repeats: true, warningTime: warning)
    }

    let workday = DeviceActivitySchedule(intervalStart: DateComponents(hour: 9, minute: 0),
                                         intervalEnd: DateComponents(hour: 17, minute: 0), repeats: true)

    /// The error thrown for a request, or nil if it was accepted.
    func failure(_ schedule: DeviceActivitySchedule,
                 events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:],
                 count: Int = 1,
                 status: AuthorizationStatus = .approved,
                 calendar: ScheduleCalendar = newYork) -> Failure? {
        do {
            try calendar.validateMonitoring(schedule, events: events, monitoredActivityCount: count, authorizationStatus: status, now: now)
            return nil
        } catch let error as Failure {
            return error
        } catch {
            XCTFail("unexpected error \(error)")
            return nil
        }
    }

    func testValidRequestPasses() {
        XCTAssertNil(failure(workday, events: [.init("limit"): DeviceActivityEvent(applications: [app("a")], threshold: DateComponents(minute: 30))]))
        XCTAssertNil(failure(schedule(DateComponents(hour: 0, minute: 0), DateComponents(hour: 23, minute: 59))), "the seed's all-day schedule")
    }

    func testUnauthorized() {
        XCTAssertEqual(failure(workday, status: .denied), .unauthorized)
        XCTAssertEqual(failure(workday, status: .notDetermined), .unauthorized)
        XCTAssertEqual(Failure.unauthorized.description,
                       "The app isn't authorized to monitor device activity; request authorization with FamilyControls' AuthorizationCenter first.")
    }

    func testExcessiveActivities() {
        XCTAssertNil(failure(workday, count: 20))
        XCTAssertEqual(failure(workday, count: 21), .excessiveActivities(count: 21))
        XCTAssertEqual(Failure.excessiveActivities(count: 21).description,
                       "Monitoring 21 activities exceeds the limit of 20 for an app and its extensions; stop monitoring an activity (or reuse its name) before starting another.")
    }

    func testIntervalTooShort() {
        XCTAssertEqual(failure(schedule(DateComponents(hour: 9, minute: 0), DateComponents(hour: 9, minute: 14))), .intervalTooShort(length: 14 * 60))
        XCTAssertNil(failure(schedule(DateComponents(hour: 9, minute: 0), DateComponents(hour: 9, minute: 15))), "exactly fifteen minutes is allowed")
        XCTAssertEqual(Failure.intervalTooShort(length: 14 * 60 + 59).description,
                       "The schedule's interval lasts 14 min 59 s, shorter than the minimum of 15 minutes; lengthen it, or use warningTime to be called earlier.")
    }

    func testIntervalTooLong() {
        let week = schedule(DateComponents(hour: 9, minute: 0, weekday: 2), DateComponents(hour: 9, minute: 0, weekday: 2))
        XCTAssertNil(failure(week), "exactly one week is allowed")
        let longer = schedule(DateComponents(hour: 9, minute: 0, weekday: 2), DateComponents(hour: 10, minute: 0, weekday: 2))
        XCTAssertNil(failure(longer), "Monday 09:00 to the same Monday 10:00 is one hour")
        let almostWeek = schedule(DateComponents(hour: 10, minute: 0, weekday: 2), DateComponents(hour: 9, minute: 0, weekday: 2))
        XCTAssertNil(failure(almostWeek), "Monday 10:00 to the next Monday 09:00 is 6 d 23 h")
        let month = schedule(DateComponents(day: 1, hour: 0, minute: 0), DateComponents(day: 15, hour: 0, minute: 0))
        XCTAssertEqual(failure(month), .intervalTooLong(length: 14 * 86_400))
        XCTAssertEqual(Failure.intervalTooLong(length: 14 * 86_400 + 3_600).description,
                       "The schedule's interval lasts 14 d 1 h, longer than the maximum of one week; shorten it or split it into several activities.")
    }

    func testWeekLongScheduleStaysValidAcrossDaylightSaving() {
        // Thursday 2026-10-22 09:00 CEST to Thursday 2026-10-29 09:00 CET spans the Berlin
        // fall-back: 169 real hours, but one week of wall-clock time.
        let week = schedule(DateComponents(hour: 9, minute: 0, weekday: 5), DateComponents(hour: 9, minute: 0, weekday: 5))
        XCTAssertNoThrow(try berlin.validateMonitoring(week, monitoredActivityCount: 1, authorizationStatus: .approved, now: utc("2026-10-23T12:00:00Z")))
        XCTAssertEqual(berlin.nextInterval(for: week, at: utc("2026-10-23T12:00:00Z"))?.duration, 7 * 86_400 + 3_600)
    }

    func testComponentsOutOfRange() {
        let cases: [(DateComponents, String, Int, ClosedRange<Int>)] = [
            (DateComponents(hour: 24, minute: 0), "hour", 24, 0...23),
            (DateComponents(hour: 9, minute: 60), "minute", 60, 0...59),
            (DateComponents(hour: 9, minute: 0, second: 60), "second", 60, 0...59),
            (DateComponents(hour: 9, minute: 0, weekday: 0), "weekday", 0, 1...7),
            (DateComponents(hour: 9, minute: 0, weekday: 8), "weekday", 8, 1...7),
            (DateComponents(hour: -1, minute: 0), "hour", -1, 0...23),
        ]
        for (start, component, value, range) in cases {
            var end = start
            end.hour = 20
            end.minute = 0
            XCTAssertEqual(failure(schedule(start, end)),
                           .invalidDateComponents(problem: .outOfRange(field: "intervalStart", component: component, value: value, range: range)),
                           "\(component) \(value)")
        }
        XCTAssertEqual(failure(schedule(DateComponents(hour: 9, minute: 0), DateComponents(hour: 25, minute: 0))),
                       .invalidDateComponents(problem: .outOfRange(field: "intervalEnd", component: "hour", value: 25, range: 0...23)))
        XCTAssertEqual(Failure.invalidDateComponents(problem: .outOfRange(field: "intervalStart", component: "hour", value: 24, range: 0...23)).description,
                       "The schedule's date components are invalid: intervalStart.hour is 24, outside 0-23; use a value in that range.")
    }

    func testMismatchedComponents() {
        let error = failure(schedule(DateComponents(hour: 9, minute: 0), DateComponents(hour: 17)))
        XCTAssertEqual(error, .invalidDateComponents(problem: .mismatchedComponents(start: ["hour", "minute"], end: ["hour"])))
        XCTAssertEqual(error?.description,
                       "The schedule's date components are invalid: intervalStart sets [hour, minute] but intervalEnd sets [hour]; set the same components on both.")
        XCTAssertEqual(failure(schedule(DateComponents(hour: 9, weekday: 2), DateComponents(hour: 17))),
                       .invalidDateComponents(problem: .mismatchedComponents(start: ["weekday", "hour"], end: ["hour"])))
    }

    func testNoComponentsAndUnsupportedComponents() {
        XCTAssertEqual(failure(schedule(DateComponents(), DateComponents(hour: 17))), .invalidDateComponents(problem: .noComponents(field: "intervalStart")))
        XCTAssertEqual(Failure.DateComponentsProblem.noComponents(field: "intervalStart").description,
                       "intervalStart sets no component; set at least an hour and a minute.")
        var withCalendar = DateComponents(hour: 9, minute: 0)
        withCalendar.calendar = Calendar(identifier: .gregorian)
        XCTAssertEqual(failure(schedule(withCalendar, DateComponents(hour: 17, minute: 0))),
                       .invalidDateComponents(problem: .unsupportedComponent(field: "intervalStart", component: "calendar")))
        // A zone is a schedule's to name (its wall times are that zone's), one for the whole schedule; never a duration's.
        var manila = DateComponents(hour: 9, minute: 0), tokyo = DateComponents(hour: 17, minute: 0)
        manila.timeZone = zone("Asia/Manila")
        tokyo.timeZone = zone("Asia/Tokyo")
        XCTAssertNil(failure(schedule(manila, DateComponents(hour: 17, minute: 0))))
        XCTAssertEqual(failure(schedule(manila, tokyo)),
                       .invalidDateComponents(problem: .mismatchedTimeZones(start: "Asia/Manila", end: "Asia/Tokyo")))
        var zonedThreshold = DateComponents(minute: 30)
        zonedThreshold.timeZone = zone("Asia/Manila")
        XCTAssertEqual(failure(schedule(DateComponents(hour: 9, minute: 0), DateComponents(hour: 17, minute: 0)),
                               events: [.init("e"): DeviceActivityEvent(threshold: zonedThreshold)]),
                       .invalidDateComponents(problem: .notADuration(field: "threshold of event 'e'", component: "timeZone")))
        var withNanoseconds = DateComponents(hour: 17, minute: 0)
        withNanoseconds.nanosecond = 5
        XCTAssertEqual(failure(schedule(DateComponents(hour: 9, minute: 0), withNanoseconds)),
                       .invalidDateComponents(problem: .unsupportedComponent(field: "intervalEnd", component: "nanosecond")))
    }

    func testNoMatchingDate() {
        let past = schedule(DateComponents(year: 2020, month: 1, day: 1, hour: 9, minute: 0), DateComponents(year: 2020, month: 1, day: 1, hour: 17, minute: 0))
        XCTAssertEqual(failure(past), .invalidDateComponents(problem: .noMatchingDate))
        let impossible = schedule(DateComponents(month: 2, day: 30, hour: 9), DateComponents(month: 2, day: 30, hour: 17))
        XCTAssertEqual(failure(impossible), .invalidDateComponents(problem: .noMatchingDate))
        XCTAssertEqual(Failure.invalidDateComponents(problem: .noMatchingDate).description,
                       "The schedule's date components are invalid: intervalStart and intervalEnd match no future date; check the year, month, day and weekday.")
    }

    func testThresholds() {
        let zero: [DeviceActivityEvent.Name: DeviceActivityEvent] = [.init("zero"): DeviceActivityEvent(threshold: DateComponents(minute: 0))]
        XCTAssertEqual(failure(workday, events: zero), .invalidDateComponents(problem: .nonPositiveThreshold(event: .init("zero"), seconds: 0)))
        let negative: [DeviceActivityEvent.Name: DeviceActivityEvent] = [.init("neg"): DeviceActivityEvent(threshold: DateComponents(hour: 1, minute: -90))]
        let error = failure(workday, events: negative)
        XCTAssertEqual(error, .invalidDateComponents(problem: .nonPositiveThreshold(event: .init("neg"), seconds: -1_800)))
        XCTAssertEqual(error?.description, "The schedule's date components are invalid: the threshold of event 'neg' is -30 min; it must be positive.")
        let calendarDate: [DeviceActivityEvent.Name: DeviceActivityEvent] = [.init("m"): DeviceActivityEvent(threshold: DateComponents(month: 1))]
        XCTAssertEqual(failure(workday, events: calendarDate), .invalidDateComponents(problem: .notADuration(field: "threshold of event 'm'", component: "month")))
        let empty: [DeviceActivityEvent.Name: DeviceActivityEvent] = [.init("e"): DeviceActivityEvent(threshold: DateComponents())]
        XCTAssertEqual(failure(workday, events: empty), .invalidDateComponents(problem: .nonPositiveThreshold(event: .init("e"), seconds: 0)))
    }

    func testWarningTime() {
        let negative = schedule(DateComponents(hour: 9, minute: 0), DateComponents(hour: 17, minute: 0), warning: DateComponents(minute: -5))
        XCTAssertEqual(failure(negative), .invalidDateComponents(problem: .negativeWarningTime(seconds: -300)))
        XCTAssertEqual(Failure.DateComponentsProblem.negativeWarningTime(seconds: -300).description, "warningTime is -5 min; it must not be negative.")
        let weekday = schedule(DateComponents(hour: 9, minute: 0), DateComponents(hour: 17, minute: 0), warning: DateComponents(weekday: 1))
        XCTAssertEqual(failure(weekday), .invalidDateComponents(problem: .notADuration(field: "warningTime", component: "weekday")))
    }

    func testCheckOrderAuthorizationFirst() {
        let bad = schedule(DateComponents(hour: 24, minute: 0), DateComponents(hour: 9, minute: 1))
        XCTAssertEqual(failure(bad, count: 30, status: .denied), .unauthorized)
        XCTAssertEqual(failure(bad, count: 30), .excessiveActivities(count: 30))
    }

    func testErrorsAreLocalized() {
        let error: Error = Failure.intervalTooShort(length: 600)
        XCTAssertEqual(error.localizedDescription, Failure.intervalTooShort(length: 600).description)
        XCTAssertTrue(Failure.intervalTooShort(length: 600).description.contains("10 min"))
    }
}
