import BusProtocol
import Foundation
import LockInvariant
import XCTest

/// Each rule of the promise language on hand-written journals, with both errors: usable while locked and shielded
/// while allowed. 2026-11-23 is a Monday.
final class PromiseRuleTableTests: XCTestCase {
    func judge(_ rules: ProductRules, _ journal: JournalBuilder) -> [String] {
        LockInvariantTableTests.judge([rules], journal)
    }

    /// A night window on Mondays only: Monday's night (into Tuesday morning) is locked, Tuesday's is not.
    func testAWindowOnSomeWeekdaysHoldsOnlyOnTheNightsItStarts() throws {
        let rules = try Products.promised(#"{locked: {windows: [{start: "22:30", end: "06:30", days: [mon]}]}}"#)
        var j = JournalBuilder(start: "2026-11-23 20:00")
        j.open("2026-11-23 23:00", "Instagram")
        j.close("2026-11-23 23:05", "Instagram")                     // Monday night: locked
        j.open("2026-11-24 02:00", "Instagram")
        j.close("2026-11-24 02:05", "Instagram")                     // still Monday's night
        j.open("2026-11-24 23:00", "Instagram")
        j.close("2026-11-24 23:05", "Instagram")                     // Tuesday night: free
        j.shield("2026-11-24 23:10", j.app("TikTok"))
        j.dismiss("2026-11-24 23:12", "TikTok")                      // Tuesday night: a shield is wrong
        j.end("2026-11-25 08:00")
        XCTAssertEqual(judge(rules, j), ["bedtime usable-while-locked Instagram 23:00:00–23:05:00 by -",
                                         "bedtime usable-while-locked Instagram 02:00:00–02:05:00 by -",
                                         "bedtime shielded-while-allowed TikTok 23:10:00–23:12:00 by -"])
    }

    func testAWindowOnADateHoldsOnThatDateOnly() throws {
        let rules = try Products.promised(#"{locked: {windows: [{start: "09:00", end: "10:00", dates: ["2026-11-24"]}]}}"#)
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.open("2026-11-23 09:10", "Instagram")
        j.close("2026-11-23 09:20", "Instagram")
        j.open("2026-11-24 09:10", "Instagram")
        j.close("2026-11-24 09:20", "Instagram")
        j.end("2026-11-24 12:00")
        XCTAssertEqual(judge(rules, j), ["bedtime usable-while-locked Instagram 09:10:00–09:20:00 by -"])
    }

    /// Two passes a night: the third press grants nothing — a shield after it is right, use after it is not.
    func testAPassCapRefusesThePressPastIt() throws {
        let rules = try Products.promised(#"{locked: {windows: [{start: "22:00", end: "06:00"}]}, passes: [{button: secondary, minutes: 5, cap: 2, capPer: window}]}"#)
        var j = JournalBuilder(start: "2026-11-23 21:00")
        for (shown, closed) in [("22:10", "22:13"), ("22:30", "22:33"), ("22:50", "22:53")] {
            j.shield("2026-11-23 \(shown)", j.app("Instagram"))
            j.press("2026-11-23 \(shown):05", .secondaryButtonPressed, on: "Instagram")
            j.dismiss("2026-11-23 \(shown):05", "Instagram")
            j.open("2026-11-23 \(shown):05", "Instagram")
            j.close("2026-11-23 \(closed)", "Instagram")
        }
        j.end("2026-11-24 07:00")
        XCTAssertEqual(judge(rules, j), ["bedtime usable-while-locked Instagram 22:50:05–22:53:00 by -"])
        // The next night's cap starts again.
        var next = JournalBuilder(start: "2026-11-24 21:00")
        next.shield("2026-11-24 22:10", next.app("Instagram"))
        next.press("2026-11-24 22:10:05", .secondaryButtonPressed, on: "Instagram")
        next.dismiss("2026-11-24 22:10:05", "Instagram")
        next.shield("2026-11-24 22:12", next.app("Instagram"))       // shielded within its pass
        next.dismiss("2026-11-24 22:13", "Instagram")
        next.end("2026-11-24 23:00")
        XCTAssertEqual(judge(rules, next), ["bedtime shielded-while-allowed Instagram 22:12:00–22:13:00 by -"])
    }

    /// A product pass lets every target through; a press inside a strict window grants nothing.
    func testAProductPassLiftsEveryTargetAndAStrictWindowAdmitsNone() throws {
        let rules = try Products.promised(#"{locked: {windows: [{start: "09:00", end: "10:00"}, {start: "11:00", end: "12:00", strict: true}]}, passes: [{button: primary, minutes: 10, for: product}]}"#)
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.shield("2026-11-23 09:10", j.app("Instagram"))
        j.press("2026-11-23 09:11", .primaryButtonPressed, on: "Instagram")
        j.dismiss("2026-11-23 09:11", "Instagram")
        j.open("2026-11-23 09:12", "TikTok")
        j.close("2026-11-23 09:20", "TikTok")                        // within the product pass
        j.shield("2026-11-23 11:10", j.app("Instagram"))
        j.press("2026-11-23 11:11", .primaryButtonPressed, on: "Instagram")
        j.dismiss("2026-11-23 11:11", "Instagram")
        j.open("2026-11-23 11:12", "TikTok")
        j.close("2026-11-23 11:15", "TikTok")                        // strict: no pass
        j.end("2026-11-23 13:00")
        XCTAssertEqual(judge(rules, j), ["bedtime usable-while-locked TikTok 11:12:00–11:15:00 by -"])
    }

    /// "Skip tonight" before the window lifts tonight's; "end early" lifts the rest of the one in progress.
    func testSkipAndEndEarlyLiftAWindowOccurrence() throws {
        let rules = try Products.promised(#"{locked: {windows: [{start: "22:00", end: "23:30"}]}, overrides: [{appAction: skip-tonight, effect: skip-window}, {appAction: end-early, effect: end-window}]}"#)
        var j = JournalBuilder(start: "2026-11-23 20:00")
        j.appAction("2026-11-23 21:00", "skip-tonight")
        j.open("2026-11-23 22:10", "Instagram")
        j.close("2026-11-23 22:20", "Instagram")                     // skipped: free
        j.open("2026-11-24 22:10", "Instagram")
        j.close("2026-11-24 22:20", "Instagram")                     // the next night is locked again
        j.appAction("2026-11-24 22:30", "end-early")
        j.open("2026-11-24 22:40", "Instagram")
        j.close("2026-11-24 22:50", "Instagram")                     // ended early: free
        j.shield("2026-11-24 23:00", j.app("TikTok"))
        j.dismiss("2026-11-24 23:05", "TikTok")                      // a shield after the end is wrong
        j.appAction("2026-11-25 21:00", "end-early")                 // outside a window: nothing to end
        j.open("2026-11-25 22:10", "Instagram")
        j.close("2026-11-25 22:15", "Instagram")
        j.end("2026-11-26 00:00")
        XCTAssertEqual(judge(rules, j), ["bedtime usable-while-locked Instagram 22:10:00–22:20:00 by -",
                                         "bedtime shielded-while-allowed TikTok 23:00:00–23:05:00 by -",
                                         "bedtime usable-while-locked Instagram 22:10:00–22:15:00 by -"])
    }

    /// A pause lifts every lock for its minutes, then the lock is back (with its grace).
    func testAPauseLiftsTheLockForItsMinutes() throws {
        let rules = try Products.promised("{locked: always, overrides: [{appAction: pause, effect: pause, minutes: 15}]}")
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.appAction("2026-11-23 09:00", "pause")
        j.open("2026-11-23 09:01", "Instagram")
        j.close("2026-11-23 09:17", "Instagram")                     // the pause ended 09:15, grace to 09:16
        j.appAction("2026-11-23 10:00", "pause")
        j.shield("2026-11-23 10:05", j.app("TikTok"))
        j.dismiss("2026-11-23 10:06", "TikTok")
        j.end("2026-11-23 11:00")
        XCTAssertEqual(judge(rules, j), ["bedtime usable-while-locked Instagram 09:15:00–09:17:00 by -",
                                         "bedtime shielded-while-allowed TikTok 10:05:00–10:06:00 by -"])
    }

    /// A session runs from its start action for its minutes; stop ends a lenient one early, not a strict one.
    func testSessionsStartAndStopFromTheApp() throws {
        let lenient = try Products.promised("{locked: {sessions: [{start: go, stop: halt, minutes: 60}]}}")
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.appAction("2026-11-23 09:00", "go")
        j.open("2026-11-23 09:10", "Instagram")
        j.close("2026-11-23 09:15", "Instagram")
        j.appAction("2026-11-23 09:20", "halt")
        j.shield("2026-11-23 09:30", j.app("TikTok"))
        j.dismiss("2026-11-23 09:31", "TikTok")
        j.end("2026-11-23 11:00")
        XCTAssertEqual(judge(lenient, j), ["bedtime usable-while-locked Instagram 09:10:00–09:15:00 by -",
                                           "bedtime shielded-while-allowed TikTok 09:30:00–09:31:00 by -"])
        let strict = try Products.promised("{locked: {sessions: [{start: go, stop: halt, minutes: 60, strict: true}]}}")
        XCTAssertEqual(judge(strict, j), ["bedtime usable-while-locked Instagram 09:10:00–09:15:00 by -"])
    }

    /// An unlock earned in the app lasts its minutes; another app's action is not this product's.
    func testAnUnlockEarnedByAnAppAction() throws {
        let rules = try Products.promised("{locked: always, unlocks: [{appAction: breathe, minutes: 10}]}")
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.appAction("2026-11-23 09:00", "breathe")
        j.open("2026-11-23 09:02", "Instagram")
        j.close("2026-11-23 09:09", "Instagram")
        j.appAction("2026-11-23 10:00", "breathe", app: "Habit Lock")
        j.open("2026-11-23 10:02", "Instagram")
        j.close("2026-11-23 10:04", "Instagram")
        j.end("2026-11-23 11:00")
        XCTAssertEqual(judge(rules, j), ["bedtime usable-while-locked Instagram 10:02:00–10:04:00 by -"])
    }

    /// The promise's grace replaces the minute.
    func testThePromisesGraceIsTheOneJudged() throws {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.open("2026-11-23 08:59", "Instagram")
        j.close("2026-11-23 09:01:30", "Instagram")
        j.end("2026-11-23 10:00")
        let window = #"locked: {windows: [{start: "09:00", end: "10:00"}]}"#
        XCTAssertEqual(judge(try Products.promised("{\(window)}"), j), ["bedtime usable-while-locked Instagram 09:00:00–09:01:30 by -"])
        XCTAssertEqual(judge(try Products.promised("{graceSeconds: 120, \(window)}"), j), [])
    }

    /// The escape hatch: a model in Swift says when targets are locked (here: Instagram on odd minutes of the hour
    /// only — nothing the rules can say), and the checker judges the screen against it.
    func testAPromiseModelJudgesWhatTheRulesCannotSay() throws {
        struct OddMinutes: PromiseModel {
            func lockedPeriods(journal: [Envelope], product: String, timeZone: TimeZone) throws -> [String: [DateInterval]] {
                let start = Date(timeIntervalSince1970: Double(journal.first!.time) / 1000)
                return ["Instagram": (0..<120).filter { $0 % 2 == 1 }.map { DateInterval(start: start.addingTimeInterval(Double($0) * 60), duration: 60) }]
            }
        }
        var rules = try Products.promised("{model: odd-minutes}")
        rules.model = OddMinutes()
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.open("2026-11-23 08:02:00", "Instagram")
        j.close("2026-11-23 08:02:50", "Instagram")                  // an even minute: free
        j.shield("2026-11-23 08:04:00", j.app("Instagram"))
        j.dismiss("2026-11-23 08:04:30", "Instagram")                // an even minute: wrongly shielded (grace a minute: none)
        j.end("2026-11-23 08:10")
        let checker = LockInvariantChecker(products: [rules], timeZone: TimeZone(identifier: "Europe/Berlin")!)
        let verdicts = checker.verdicts(for: j.envelopes)
        XCTAssertNil(verdicts[0].modelFailure)
        XCTAssertEqual(judge(rules, j), [])  // each lock or permission lasts a minute: the grace covers both
        var strict = rules
        strict.promise.grace = 0
        XCTAssertEqual(judge(strict, j), ["bedtime shielded-while-allowed Instagram 08:04:00–08:04:30 by -"])
    }
}
