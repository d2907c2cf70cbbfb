import BusProtocol
import Foundation
import ReferenceKit
import XCTest

/// The notifier's pure rules: its options, quiet hours, one notification of a kind per window, rule texts.
final class NotificationPolicyTests: XCTestCase {
    let berlin = TimeZone(identifier: "Europe/Berlin")!

    /// An instant on 23 November 2026 at a Berlin wall-clock time (UTC+1).
    func berlin(_ hour: Int, _ minute: Int) -> Date {
        ISO8601DateFormatter().date(from: "2026-11-23T00:00:00Z")!.addingTimeInterval(TimeInterval((hour - 1) * 3600 + minute * 60))
    }

    func time(_ text: String) -> ClockTime { ClockTime(text)! }

    func testClockTimesAreStrictHHMM() {
        XCTAssertEqual(ClockTime("23:59")?.minuteOfDay, 1439)
        XCTAssertEqual(ClockTime("00:00")?.minuteOfDay, 0)
        for bad in ["7:00", "24:00", "07:60", "0700", "07:00:00", ""] { XCTAssertNil(ClockTime(bad), bad) }
        XCTAssertEqual(ClockTime(of: berlin(22, 5), in: berlin), time("22:05"))
    }

    func testQuietHoursAcrossMidnightAndWithinADay() {
        let night = QuietHours(start: time("22:00"), end: time("07:00"))
        for inside in ["22:00", "23:59", "00:00", "06:59"] { XCTAssertTrue(night.contains(time(inside)), inside) }
        for outside in ["07:00", "12:00", "21:59"] { XCTAssertFalse(night.contains(time(outside)), outside) }
        let lunch = QuietHours(start: time("13:00"), end: time("14:00"))
        XCTAssertTrue(lunch.contains(time("13:00")))
        XCTAssertFalse(lunch.contains(time("14:00")))
        XCTAssertFalse(lunch.contains(time("12:59")))
    }

    func testQuietHoursLetOnlyTimeSensitiveNotificationsThrough() {
        let policy = NotificationPolicy(quietHours: QuietHours(start: time("22:00"), end: time("07:00")), dedupWindow: 0, timeZone: berlin)
        XCTAssertEqual(policy.suppression(of: .passive, at: berlin(23, 0), lastOfKind: nil), .quietHours)
        XCTAssertEqual(policy.suppression(of: .active, at: berlin(6, 59), lastOfKind: nil), .quietHours)
        XCTAssertNil(policy.suppression(of: .timeSensitive, at: berlin(23, 0), lastOfKind: nil))
        XCTAssertNil(policy.suppression(of: .active, at: berlin(7, 0), lastOfKind: nil))
        let strict = NotificationPolicy(quietHours: QuietHours(start: time("22:00"), end: time("07:00"), allowTimeSensitive: false),
                                        dedupWindow: 0, timeZone: berlin)
        XCTAssertEqual(strict.suppression(of: .timeSensitive, at: berlin(23, 0), lastOfKind: nil), .quietHours)
    }

    func testOneNotificationOfAKindPerWindow() {
        let policy = NotificationPolicy(quietHours: nil, dedupWindow: 30 * 60, timeZone: berlin)
        XCTAssertEqual(policy.suppression(of: .timeSensitive, at: berlin(12, 29), lastOfKind: berlin(12, 0)), .duplicate,
                       "time-sensitive does not bypass de-duplication")
        XCTAssertNil(policy.suppression(of: .active, at: berlin(12, 30), lastOfKind: berlin(12, 0)))
        XCTAssertNil(policy.suppression(of: .active, at: berlin(12, 1), lastOfKind: nil))
        let unlimited = NotificationPolicy(quietHours: nil, dedupWindow: 0, timeZone: berlin)
        XCTAssertNil(unlimited.suppression(of: .active, at: berlin(12, 0), lastOfKind: berlin(12, 0)))
    }

    func decode(_ json: String) throws -> NotifierOptions {
        try NotifierOptions(json: JSONValue(parsing: Array(json.utf8)))
    }

    let rule = #"{"on":"shield.shown","kind":"k","title":"{target} is shielded","body":"b","route":"circle"}"#

    func testOptionsDecodeWithDefaultsAndTheirTopics() throws {
        let options = try decode(#"{"appGroup":"g","routes":{"circle":"tether://nudge?action=call"},"rules":[\#(rule),\#(rule)]}"#)
        XCTAssertEqual(options.topics, ["shield.shown"])
        XCTAssertEqual(options.routeLifetimeMinutes, 15)
        XCTAssertEqual(options.dedupMinutes, 0)
        XCTAssertTrue(options.desktop)
        XCTAssertNil(options.quietHours)
        XCTAssertEqual(options.rules.first?.interruptionLevel, .active)
    }

    func testOptionsRefuseTyposAndDanglingRoutes() {
        let base = #""appGroup":"g","routes":{"circle":"tether://x"},"rules":[\#(rule)]"#
        XCTAssertThrowsError(try decode("{\(base),\"quietHour\":{}}")) { error in
            XCTAssertEqual(error as? PluginOptionsError, .unknownKey("quietHour", in: "the notifier's options",
                                                                    allowed: ["appGroup", "rules", "routes", "routeLifetimeMinutes", "quietHours", "dedupMinutes", "desktop"]))
        }
        XCTAssertThrowsError(try decode(#"{"appGroup":"g","rules":[\#(rule)]}"#)) { error in
            XCTAssertEqual(error as? PluginOptionsError, .invalid(key: "rules[0].route", problem: "no route 'circle' in routes (routes: none)"))
        }
        XCTAssertThrowsError(try decode(#"{"routes":{"circle":"tether://x"},"rules":[\#(rule)]}"#)) { error in
            guard case .invalid(key: "appGroup", _)? = error as? PluginOptionsError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try decode("{\(base),\"quietHours\":{\"start\":\"22:00\",\"end\":\"22:00\"}}"))
        XCTAssertThrowsError(try decode("{\(base),\"dedupMinutes\":-1}"))
        XCTAssertThrowsError(try decode(#"{"appGroup":"g","rules":[]}"#))
    }

    func testOptionsOfTheWrongShapeNameTheKeyAndWhatWasExpected() {
        let base = #""appGroup":"g","routes":{"circle":"tether://x"},"rules":[\#(rule)]"#
        let wrong: [(json: String, error: PluginOptionsError)] = [
            ("{\(base),\"routeLifetimeMinutes\":\"15\"}", .invalid(key: "routeLifetimeMinutes", problem: "expected a whole number, found string")),
            ("{\(base),\"desktop\":\"yes\"}", .invalid(key: "desktop", problem: "expected true or false, found string")),
            (#"{"appGroup":"g","routes":{"circle":7},"rules":[\#(rule)]}"#, .invalid(key: "routes.circle", problem: "expected a string, found number")),
            (#"{"appGroup":"g","rules":{"on":"shield.shown"}}"#, .invalid(key: "rules", problem: "expected a list, found object")),
            (#"{"appGroup":"g","rules":[{"on":"shield.shown","kind":"k","title":"t"}]}"#, .invalid(key: "rules[0].body", problem: "missing")),
            (#"{"appGroup":"g","rules":[{"on":"shield.shown","kind":"k","title":"t","body":"b","interruptionLevel":"loud"}]}"#,
             .invalid(key: "rules[0].interruptionLevel", problem: "'loud' is not one of passive, active, time-sensitive")),
            (#"{"appGroup":"g","rules":[{"on":"shield.shown","kind":"k","title":"t","body":"b","when":{"event":1}}]}"#,
             .invalid(key: "rules[0].when.event", problem: "expected a string, found number")),
            (#"{"appGroup":"g","rules":[{"on":"shield.shown","kind":"k","title":"t","body":"b","whom":"x"}]}"#,
             .unknownKey("whom", in: "a notifier rule", allowed: ["on", "when", "kind", "title", "body", "interruptionLevel", "route"])),
            ("{\(base),\"quietHours\":{\"start\":\"22:00\",\"end\":\"7:00\"}}", .invalid(key: "quietHours.end", problem: ClockTime.notATimeOfDay("7:00"))),
            ("{\(base),\"quietHours\":{\"start\":\"22:00\",\"end\":\"07:00\",\"allow\":true}}",
             .unknownKey("allow", in: "quietHours", allowed: ["start", "end", "allowTimeSensitive"])),
            ("[]", .invalid(key: "options", problem: "expected an object, found array")),
        ]
        for (json, expected) in wrong {
            XCTAssertThrowsError(try decode(json), json) { error in XCTAssertEqual(error as? PluginOptionsError, expected, json) }
        }
        let quiet = try? decode("{\(base),\"quietHours\":{\"start\":\"22:00\",\"end\":\"07:00\",\"allowTimeSensitive\":false},\"desktop\":false}")
        XCTAssertEqual(quiet?.quietHours, QuietHours(start: time("22:00"), end: time("07:00"), allowTimeSensitive: false))
        XCTAssertEqual(quiet?.desktop, false)
        XCTAssertEqual(quiet?.rules.first?.route, "circle")
    }

    func testRulesMatchTheirTopicAndFieldsAndFillTheirTexts() throws {
        let options = try decode(#"{"appGroup":"g","rules":[{"on":"deviceactivity.event-did-reach-threshold","when":{"event":"mindful"},"kind":"k","title":"{event} of {activity}","body":"{nothing}"}]}"#)
        let rule = try XCTUnwrap(options.rules.first)
        XCTAssertTrue(rule.matches(topic: "deviceactivity.event-did-reach-threshold", fields: ["event": "mindful", "activity": "daily"]))
        XCTAssertFalse(rule.matches(topic: "deviceactivity.event-did-reach-threshold", fields: ["event": "other"]))
        XCTAssertFalse(rule.matches(topic: "shield.shown", fields: ["event": "mindful"]))
        XCTAssertEqual(NotificationRule.fill(rule.title, with: ["event": "mindful", "activity": "daily"]), "mindful of daily")
        XCTAssertEqual(NotificationRule.fill(rule.body, with: ["event": "mindful"]), "{nothing}", "unknown names stay as written")
    }
}
