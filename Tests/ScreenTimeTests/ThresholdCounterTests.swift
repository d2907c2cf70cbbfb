import XCTest
@testable import ScreenTime

final class ThresholdCounterTests: XCTestCase {
    let instagram = app("app.instagram")
    let tiktok = app("app.tiktok")
    let chess = app("app.chess")
    let social = category("cat.social")
    let games = category("cat.games")
    let limit = DeviceActivityEvent.Name("limit")
    let interval = utcInterval("2026-06-10T10:00:00Z", "2026-06-10T11:00:00Z")

    func span(_ token: ApplicationToken, category: ActivityCategoryToken? = nil, _ start: String, _ end: String) -> UsageSpan {
        UsageSpan(subject: .application(token, category: category), start: utc("2026-06-10T\(start)Z"), end: utc("2026-06-10T\(end)Z"))
    }

    func reached(_ event: DeviceActivityEvent.Name, _ time: String) -> ThresholdCrossing {
        ThresholdCrossing(event: event, callback: .eventDidReachThreshold, date: utc("2026-06-10T\(time)Z"))
    }

    func warned(_ event: DeviceActivityEvent.Name, _ time: String) -> ThresholdCrossing {
        ThresholdCrossing(event: event, callback: .eventWillReachThresholdWarning, date: utc("2026-06-10T\(time)Z"))
    }

    func counter(_ event: DeviceActivityEvent, warning: DateComponents? = nil) -> ThresholdCounter {
        ThresholdCounter(events: [limit: event], warningTime: warning, calendar: utcCalendar)
    }

    func testReachInstantIsExactInsideASpan() {
        var counter = counter(DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 10)))
        XCTAssertEqual(counter.startInterval(interval, monitoringStart: interval.start), [])
        XCTAssertEqual(counter.record(span(instagram, "10:02:00", "10:20:00")), [reached(limit, "10:12:00")])
        XCTAssertEqual(counter.usage(of: limit), 18 * 60)
    }

    func testUsageAddsUpAcrossSpansAndOtherAppsDontCount() {
        var counter = counter(DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 10)))
        _ = counter.startInterval(interval, monitoringStart: interval.start)
        XCTAssertEqual(counter.record(span(instagram, "10:00:00", "10:04:00")), [])
        XCTAssertEqual(counter.record(span(chess, "10:04:00", "10:10:00")), [])
        XCTAssertEqual(counter.record(span(instagram, "10:10:00", "10:20:00")), [reached(limit, "10:16:00")])
    }

    func testWarningComesWarningTimeBeforeTheThreshold() {
        var counter = counter(DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 10)), warning: DateComponents(minute: 3))
        XCTAssertEqual(counter.startInterval(interval, monitoringStart: interval.start), [])
        XCTAssertEqual(counter.record(span(instagram, "10:00:00", "10:08:00")), [warned(limit, "10:07:00")])
        XCTAssertEqual(counter.record(span(instagram, "10:30:00", "10:40:00")), [reached(limit, "10:32:00")])
    }

    func testWarningAndReachInOneSpanComeInOrder() {
        var counter = counter(DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 10)), warning: DateComponents(minute: 3))
        _ = counter.startInterval(interval, monitoringStart: interval.start)
        XCTAssertEqual(counter.record(span(instagram, "10:00:00", "10:30:00")), [warned(limit, "10:07:00"), reached(limit, "10:10:00")])
    }

    func testWarningLongerThanThresholdIsClampedToIntervalStart() {
        var counter = counter(DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 10)), warning: DateComponents(minute: 15))
        XCTAssertEqual(counter.startInterval(interval, monitoringStart: interval.start), [warned(limit, "10:00:00")])
        XCTAssertEqual(counter.record(span(instagram, "10:00:00", "10:30:00")), [reached(limit, "10:10:00")], "the warning isn't repeated")
    }

    func testEachCallbackFiresOncePerInterval() {
        var counter = counter(DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 5)), warning: DateComponents(minute: 1))
        _ = counter.startInterval(interval, monitoringStart: interval.start)
        XCTAssertEqual(counter.record(span(instagram, "10:00:00", "10:10:00")).count, 2)
        XCTAssertEqual(counter.record(span(instagram, "10:20:00", "10:40:00")), [])
        XCTAssertEqual(counter.usage(of: limit), 30 * 60, "use is still counted")
    }

    func testCountersResetAtEachNewInterval() {
        var counter = counter(DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 5)))
        _ = counter.startInterval(interval, monitoringStart: interval.start)
        XCTAssertEqual(counter.record(span(instagram, "10:00:00", "10:10:00")), [reached(limit, "10:05:00")])
        let next = utcInterval("2026-06-10T12:00:00Z", "2026-06-10T13:00:00Z")
        XCTAssertEqual(counter.startInterval(next, monitoringStart: interval.start), [])
        XCTAssertEqual(counter.usage(of: limit), 0)
        XCTAssertEqual(counter.record(span(instagram, "12:01:00", "12:03:00")), [])
        XCTAssertEqual(counter.record(span(instagram, "12:10:00", "12:20:00")), [reached(limit, "12:13:00")])
    }

    func testCategoriesCountThroughTheAppsCategory() {
        var counter = counter(DeviceActivityEvent(categories: [social], threshold: DateComponents(minute: 10)))
        _ = counter.startInterval(interval, monitoringStart: interval.start)
        XCTAssertEqual(counter.record(span(chess, category: games, "10:00:00", "10:30:00")), [])
        XCTAssertEqual(counter.record(span(instagram, category: social, "10:30:00", "10:36:00")), [])
        XCTAssertEqual(counter.record(span(tiktok, category: social, "10:36:00", "10:50:00")), [reached(limit, "10:40:00")])
    }

    func testWebDomainsCountByTokenAndCategory() {
        let reddit = domain("web.reddit")
        let event = DeviceActivityEvent(categories: [social], webDomains: [reddit], threshold: DateComponents(minute: 10))
        var counter = counter(event)
        _ = counter.startInterval(interval, monitoringStart: interval.start)
        let redditSpan = UsageSpan(subject: .webDomain(reddit, category: nil), start: utc("2026-06-10T10:00:00Z"), end: utc("2026-06-10T10:05:00Z"))
        let wikiSpan = UsageSpan(subject: .webDomain(domain("web.wiki"), category: category("cat.reference")), start: utc("2026-06-10T10:05:00Z"), end: utc("2026-06-10T10:20:00Z"))
        let twitterSpan = UsageSpan(subject: .webDomain(domain("web.twitter"), category: social), start: utc("2026-06-10T10:20:00Z"), end: utc("2026-06-10T10:30:00Z"))
        XCTAssertEqual(counter.record(redditSpan), [])
        XCTAssertEqual(counter.record(wikiSpan), [])
        XCTAssertEqual(counter.record(twitterSpan), [reached(limit, "10:25:00")])
    }

    func testEventWithoutTokensCountsAllActivity() {
        let event = DeviceActivityEvent(threshold: DateComponents(minute: 10))
        XCTAssertTrue(event.includesAllActivity)
        var counter = counter(event)
        _ = counter.startInterval(interval, monitoringStart: interval.start)
        XCTAssertEqual(counter.record(span(chess, "10:00:00", "10:06:00")), [])
        XCTAssertEqual(counter.record(UsageSpan(subject: .webDomain(domain("web.any"), category: nil),
                                                start: utc("2026-06-10T10:06:00Z"), end: utc("2026-06-10T10:20:00Z"))),
                       [reached(limit, "10:10:00")])
    }

    func testOverlappingSpansCountOnceAndSpansAreClippedToTheInterval() {
        let event = DeviceActivityEvent(applications: [instagram, tiktok], threshold: DateComponents(minute: 30))
        var counter = counter(event)
        XCTAssertEqual(counter.record(span(instagram, "10:00:00", "10:30:00")), [], "nothing counts before an interval starts")
        _ = counter.startInterval(interval, monitoringStart: interval.start)
        _ = counter.record(span(instagram, "09:50:00", "10:10:00"))
        XCTAssertEqual(counter.usage(of: limit), 10 * 60, "clipped to the interval's start")
        _ = counter.record(span(tiktok, "10:05:00", "10:15:00"))
        XCTAssertEqual(counter.usage(of: limit), 15 * 60, "the overlap 10:05-10:10 counts once")
        XCTAssertEqual(counter.record(span(instagram, "10:50:00", "11:30:00")), [])
        XCTAssertEqual(counter.usage(of: limit), 25 * 60, "clipped to the interval's end")
    }

    func testSeveralEventsAreReportedInOrder() {
        let short = DeviceActivityEvent.Name("a.short")
        let long = DeviceActivityEvent.Name("b.long")
        var counter = ThresholdCounter(events: [
            long: DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 20)),
            short: DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 5)),
        ], warningTime: nil, calendar: utcCalendar)
        _ = counter.startInterval(interval, monitoringStart: interval.start)
        XCTAssertEqual(counter.record(span(instagram, "10:00:00", "10:30:00")), [reached(short, "10:05:00"), reached(long, "10:20:00")])
    }

    // MARK: includesPastActivity

    let monitoringStart = utc("2026-06-10T10:30:00Z")
    var pastUsage: [UsageSpan] { [span(instagram, "10:05:00", "10:25:00")] }

    func testPastActivityCountsWhenIncluded() {
        var counter = counter(DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 30), includesPastActivity: true))
        XCTAssertEqual(counter.startInterval(interval, monitoringStart: monitoringStart, pastUsage: pastUsage), [])
        XCTAssertEqual(counter.usage(of: limit), 20 * 60)
        XCTAssertEqual(counter.record(span(instagram, "10:30:00", "10:59:00")), [reached(limit, "10:40:00")])
    }

    func testPastActivityIgnoredWhenNotIncluded() {
        var counter = counter(DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 30), includesPastActivity: false))
        XCTAssertEqual(counter.startInterval(interval, monitoringStart: monitoringStart, pastUsage: pastUsage), [])
        XCTAssertEqual(counter.usage(of: limit), 0)
        XCTAssertEqual(counter.record(span(instagram, "10:20:00", "10:59:00")), [], "only the 29 minutes after monitoring started count")
        XCTAssertEqual(counter.usage(of: limit), 29 * 60)
    }

    func testPastActivityOverTheThresholdIsDueWhenMonitoringStarts() {
        var counter = counter(DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 10), includesPastActivity: true),
                              warning: DateComponents(minute: 2))
        XCTAssertEqual(counter.startInterval(interval, monitoringStart: monitoringStart, pastUsage: pastUsage),
                       [warned(limit, "10:30:00"), reached(limit, "10:30:00")])
    }

    func testPastActivityReachesBackToTheRoundHour() {
        let quarterPast = utcInterval("2026-06-10T10:15:00Z", "2026-06-10T11:15:00Z")
        let early = [span(instagram, "10:05:00", "10:15:00")]
        var including = counter(DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 30), includesPastActivity: true))
        _ = including.startInterval(quarterPast, monitoringStart: utc("2026-06-10T10:20:00Z"), pastUsage: early)
        XCTAssertEqual(including.usage(of: limit), 10 * 60, "use from 10:00 counts for an interval starting at 10:15")
        var excluding = counter(DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 30)))
        _ = excluding.startInterval(quarterPast, monitoringStart: utc("2026-06-10T10:20:00Z"), pastUsage: early)
        XCTAssertEqual(excluding.usage(of: limit), 0)
    }
}
