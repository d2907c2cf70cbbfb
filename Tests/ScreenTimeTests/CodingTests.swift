import XCTest
@testable import ScreenTime

final class CodingTests: XCTestCase {
    func testTokensAndNamesArePlainStrings() throws {
        XCTAssertEqual(try assertRoundTrip(app("opaque-1")), "\"opaque-1\"")
        XCTAssertEqual(try assertRoundTrip(category("c-1")), "\"c-1\"")
        XCTAssertEqual(try assertRoundTrip(domain("d-1")), "\"d-1\"")
        XCTAssertEqual(try assertRoundTrip(DeviceActivityName("com.app.daily")), "\"com.app.daily\"")
        XCTAssertEqual(try assertRoundTrip(DeviceActivityEvent.Name("daily_limit")), "\"daily_limit\"")
        XCTAssertEqual(DeviceActivityName(rawValue: "x"), DeviceActivityName("x"))
    }

    func testDictionariesKeyedByTokensAndNamesAreObjects() throws {
        XCTAssertEqual(try assertRoundTrip([app("b"): 2, app("a"): 1]), #"{"a":1,"b":2}"#)
        XCTAssertEqual(try assertRoundTrip([DeviceActivityName("n"): true]), #"{"n":true}"#)
    }

    func testActivities() throws {
        XCTAssertEqual(try assertRoundTrip(Application(token: app("a"), localizedDisplayName: "Instagram")),
                       #"{"localizedDisplayName":"Instagram","token":"a"}"#, "a nil bundle identifier is left out")
        try assertRoundTrip(Application(token: app("a"), localizedDisplayName: nil, bundleIdentifier: "com.burbn.instagram"))
        XCTAssertEqual(try assertRoundTrip(ActivityCategory(token: category("c"), localizedDisplayName: "Social")),
                       #"{"localizedDisplayName":"Social","token":"c"}"#)
        XCTAssertEqual(try assertRoundTrip(WebDomain(token: domain("d"), domain: "instagram.com")), #"{"domain":"instagram.com","token":"d"}"#)
    }

    func testSelectionEncodesSortedSets() throws {
        let selection = FamilyActivitySelection(applicationTokens: [app("z"), app("a"), app("m")], categoryTokens: [category("c")],
                                                webDomainTokens: [], includeEntireCategory: true)
        XCTAssertEqual(try assertRoundTrip(selection),
                       #"{"applicationTokens":["a","m","z"],"categoryTokens":["c"],"includeEntireCategory":true,"webDomainTokens":[]}"#)
        XCTAssertEqual(try decodeJSON(FamilyActivitySelection.self, "{}"), FamilyActivitySelection())
        XCTAssertTrue(FamilyActivitySelection().isEmpty)
        XCTAssertTrue(FamilyActivitySelection(includeEntireCategory: true).includeEntireCategory)
    }

    func testShieldSettingsForm() throws {
        let settings = ShieldSettings(applications: [app("a3"), app("a1")],
                                      applicationCategories: .specific([category("c1")], except: [app("a2")]),
                                      webDomainCategories: .all())
        XCTAssertEqual(try assertRoundTrip(settings), #"{"applicationCategories":{"categories":["c1"],"except":["a2"],"policy":"specific"},"# +
                       #""applications":["a1","a3"],"webDomainCategories":{"except":[],"policy":"all"}}"#)
        XCTAssertEqual(try assertRoundTrip(ShieldSettings()), "{}")
        XCTAssertEqual(try assertRoundTrip(ShieldSettings.ActivityCategoryPolicy<Application>.none), #"{"policy":"none"}"#)
        XCTAssertEqual(try decodeJSON(ShieldSettings.ActivityCategoryPolicy<WebDomain>.self, #"{"policy":"all"}"#), .all())
        XCTAssertThrowsError(try decodeJSON(ShieldSettings.ActivityCategoryPolicy<WebDomain>.self, #"{"policy":"some"}"#))
        try assertRoundTrip(["focus": settings, "empty": ShieldSettings()])
    }

    func testScheduleUsesCompactDateComponents() throws {
        let schedule = DeviceActivitySchedule(intervalStart: DateComponents(hour: 22, minute: 0), intervalEnd: DateComponents(hour: 6, minute: 0),
                                              repeats: true, warningTime: DateComponents(minute: 5))
        XCTAssertEqual(try assertRoundTrip(schedule),
                       #"{"intervalEnd":{"hour":6,"minute":0},"intervalStart":{"hour":22,"minute":0},"repeats":true,"warningTime":{"minute":5}}"#)
        let weekly = DeviceActivitySchedule(intervalStart: DateComponents(year: 2026, month: 6, day: 1, hour: 9, minute: 0, second: 30, weekday: 2),
                                            intervalEnd: DateComponents(year: 2026, month: 6, day: 1, hour: 17, minute: 0, second: 0, weekday: 2), repeats: false)
        XCTAssertEqual(try assertRoundTrip(weekly), #"{"intervalEnd":{"day":1,"hour":17,"minute":0,"month":6,"second":0,"weekday":2,"year":2026},"# +
                       #""intervalStart":{"day":1,"hour":9,"minute":0,"month":6,"second":30,"weekday":2,"year":2026},"repeats":false}"#)
    }

    func testScheduleCodingCarriesATimeZoneByNameAndRejectsWhatItCantCarry() throws {
        var start = DateComponents(hour: 9, minute: 0)
        start.timeZone = zone("Asia/Manila")
        let pinned = DeviceActivitySchedule(intervalStart: start, intervalEnd: DateComponents(hour: 17, minute: 0), repeats: true)
        XCTAssertEqual(try assertRoundTrip(pinned), #"{"intervalEnd":{"hour":17,"minute":0},"intervalStart":{"hour":9,"minute":0,"timeZone":"Asia/Manila"},"repeats":true}"#)
        XCTAssertEqual(pinned.timeZone?.identifier, "Asia/Manila")
        XCTAssertThrowsError(try decodeJSON(DeviceActivitySchedule.self, #"{"intervalStart":{"hour":9,"timeZone":"Mars/Olympus"},"intervalEnd":{"hour":17},"repeats":true}"#)) { error in
            XCTAssertTrue("\(error)".contains("Unknown time zone 'Mars/Olympus'"), "\(error)")
        }
        var withCalendar = DateComponents(hour: 9, minute: 0)
        withCalendar.calendar = Calendar(identifier: .gregorian)
        XCTAssertThrowsError(try encodeJSON(DeviceActivitySchedule(intervalStart: withCalendar, intervalEnd: DateComponents(hour: 17, minute: 0), repeats: true))) { error in
            XCTAssertTrue("\(error)".contains("calendar"), "\(error)")
        }
        let json = #"{"intervalStart":{"hour":9,"nanosecond":1},"intervalEnd":{"hour":17},"repeats":true}"#
        XCTAssertThrowsError(try decodeJSON(DeviceActivitySchedule.self, json)) { error in
            XCTAssertTrue("\(error)".contains("Unknown date component 'nanosecond'"), "\(error)")
        }
        XCTAssertNil(try decodeJSON(DeviceActivitySchedule.self, #"{"intervalStart":{"hour":9},"intervalEnd":{"hour":17},"repeats":true,"warningTime":null}"#).warningTime)
    }

    func testEventsKeyedByName() throws {
        let events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [
            .init("daily_limit"): DeviceActivityEvent(applications: [app("b"), app("a")], threshold: DateComponents(hour: 1), includesPastActivity: true),
        ]
        XCTAssertEqual(try assertRoundTrip(events), #"{"daily_limit":{"applications":["a","b"],"categories":[],"includesPastActivity":true,"# +
                       #""threshold":{"hour":1},"webDomains":[]}}"#)
        XCTAssertEqual(try decodeJSON(DeviceActivityEvent.self, #"{"threshold":{"minute":30}}"#), DeviceActivityEvent(threshold: DateComponents(minute: 30)))
    }

    func testShieldAppearanceAndActions() throws {
        XCTAssertEqual(try assertRoundTrip(ShieldConfiguration.Label(text: "Close", color: .white)), ##"{"color":"#FFFFFFFF","text":"Close"}"##)
        XCTAssertEqual(try assertRoundTrip(ShieldConfiguration(backgroundBlurStyle: .systemThinMaterialDark, icon: "ShieldLeaf")),
                       #"{"backgroundBlurStyle":"systemThinMaterialDark","icon":"ShieldLeaf"}"#)
        try assertRoundTrip(ShieldConfiguration.default)
        XCTAssertEqual(try assertRoundTrip(ShieldActionResponse.defer), "\"defer\"")
        XCTAssertEqual(try assertRoundTrip(ShieldAction.secondaryButtonPressed), "\"secondaryButtonPressed\"")
        XCTAssertEqual(try assertRoundTrip(ShieldEntryPoint.webDomainInCategory), "\"webDomainInCategory\"")
        XCTAssertEqual(try assertRoundTrip(ShieldMatch(entryPoint: .application, stores: ["a", "b"])), #"{"entryPoint":"application","stores":["a","b"]}"#)
    }

    func testFamilyControlsValues() throws {
        XCTAssertEqual(try assertRoundTrip(AuthorizationStatus.approved), "\"approved\"")
        XCTAssertEqual(try assertRoundTrip(FamilyControlsMember.individual), "\"individual\"")
        XCTAssertEqual(try assertRoundTrip(FamilyControlsError.authorizationCanceled), "\"authorizationCanceled\"")
    }

    func testMonitoringErrorsRoundTrip() throws {
        XCTAssertEqual(try assertRoundTrip(DeviceActivityMonitoringError.intervalTooShort(length: 600)), #"{"intervalTooShort":{"length":600}}"#)
        try assertRoundTrip(DeviceActivityMonitoringError.unauthorized)
        try assertRoundTrip(DeviceActivityMonitoringError.invalidDateComponents(problem: .outOfRange(field: "intervalStart", component: "hour", value: 24, range: 0...23)))
        try assertRoundTrip(DeviceActivityMonitoringError.invalidDateComponents(problem: .nonPositiveThreshold(event: .init("e"), seconds: 0)))
    }

    func testUsageSpansAndCrossings() throws {
        let span = UsageSpan(subject: .application(app("a"), category: category("c")), start: utc("2026-06-10T10:00:00Z"), end: utc("2026-06-10T10:05:00Z"))
        XCTAssertEqual(try assertRoundTrip(span),
                       #"{"end":"2026-06-10T10:05:00Z","start":"2026-06-10T10:00:00Z","subject":{"application":"a","category":"c"}}"#)
        XCTAssertEqual(try assertRoundTrip(UsageSpan.Subject.webDomain(domain("d"), category: nil)), #"{"webDomain":"d"}"#)
        XCTAssertThrowsError(try decodeJSON(UsageSpan.Subject.self, #"{"category":"c"}"#))
        XCTAssertEqual(try assertRoundTrip(ThresholdCrossing(event: .init("e"), callback: .eventDidReachThreshold, date: utc("2026-06-10T10:05:00Z"))),
                       #"{"callback":"eventDidReachThreshold","date":"2026-06-10T10:05:00Z","event":"e"}"#)
    }
}
