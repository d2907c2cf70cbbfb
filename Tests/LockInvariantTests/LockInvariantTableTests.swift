// Longer than 500 lines: one table of journals and verdicts per rule kind, each case a few lines, sharing the
// journal builders at the bottom; the table reads best whole.
import BusProtocol
import Foundation
import LockInvariant
import XCTest

/// Hand-written journals whose right verdict is known, one per class of day the checker must get right.
final class LockInvariantTableTests: XCTestCase {
    /// Each violation as "product kind target from–to [decided by]", local times in the zone in force.
    func judge(_ products: [ProductRules], _ journal: JournalBuilder, zone: String = "Europe/Berlin") -> [String] {
        Self.judge(products, journal, zone: zone)
    }

    static func judge(_ products: [ProductRules], _ journal: JournalBuilder, zone: String = "Europe/Berlin") -> [String] {
        let checker = LockInvariantChecker(products: products, timeZone: TimeZone(identifier: zone)!)
        return checker.verdicts(for: journal.envelopes).flatMap(\.violations).map { violation in
            let from = String(LockViolationFormat.time(violation.from, violation.timeZone))
            let to = String(LockViolationFormat.time(violation.to, violation.timeZone))
            return "\(violation.product) \(violation.kind.rawValue) \(violation.target) \(from)–\(to) by \(violation.decidedBy ?? "-")"
        }
    }

    // MARK: Habit lock, and the grace minute

    /// Habits done at 08:56: unlocked until 09:26, locked again from then (grace until 09:27:00).
    func habitDay(closingAt close: String) -> JournalBuilder {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.store("2026-11-23 08:00", apps: ["Instagram", "TikTok"], writer: "monitor")
        j.habits("2026-11-23 08:56")
        j.store("2026-11-23 08:56", apps: [], writer: "monitor")
        j.open("2026-11-23 09:20", "Instagram")
        j.close(close, "Instagram")
        j.end("2026-11-23 10:00")
        return j
    }

    func testTheGraceMinuteEndsExactlySixtySecondsAfterTheLockBegins() {
        XCTAssertEqual(judge([Products.habitLock()], habitDay(closingAt: "2026-11-23 09:27:00")), [])
        XCTAssertEqual(judge([Products.habitLock()], habitDay(closingAt: "2026-11-23 09:27:01")),
                       ["habit-lock usable-while-locked Instagram 09:26:00–09:27:01 by monitor"])
    }

    func testUsableBeforeTheDaysHabitsAreDone() {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.open("2026-11-23 08:10", "Instagram")
        j.close("2026-11-23 08:20", "Instagram")
        j.open("2026-11-23 08:30", "Solitaire", category: "Games")  // a category member
        j.close("2026-11-23 08:31", "Solitaire", category: "Games")
        j.open("2026-11-23 08:40", "Maps")                           // never selected
        j.close("2026-11-23 08:50", "Maps")
        j.end("2026-11-23 09:00")
        XCTAssertEqual(judge([Products.habitLock()], j), ["habit-lock usable-while-locked Instagram 08:10:00–08:20:00 by -",
                                                          "habit-lock usable-while-locked Solitaire 08:30:00–08:31:00 by -"])
    }

    // MARK: FamilyControls authorization

    /// Without authorization an app can shield nothing: no lock holds from the OS saying "not determined" (a prompt
    /// the person has not answered), "denied" or a revocation, until it says "approved"; a lock that begins at the
    /// approval gets the minute. The word of another app's request does not count; before any word, authorized.
    func testNoLockHoldsWhileTheAppIsNotAuthorized() {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.open("2026-11-23 08:01", "Instagram")                    // before any word on it: locked as ever
        j.close("2026-11-23 08:02", "Instagram")
        j.authorizationRequest("2026-11-23 08:05", by: "app", answered: "notDetermined")
        j.authorizationRequest("2026-11-23 08:06", by: "other-app", answered: "approved")  // another product's app
        j.open("2026-11-23 08:10", "Instagram")                    // the prompt is up: nothing can be shielded
        j.authorizationChanged("2026-11-23 08:20", "approved")
        j.close("2026-11-23 08:21", "Instagram")                   // within the minute from the approval
        j.open("2026-11-23 08:30", "TikTok")
        j.authorizationChanged("2026-11-23 08:40", "denied")       // revoked in Settings
        j.close("2026-11-23 08:50", "TikTok")
        j.open("2026-11-23 08:52", "TikTok")
        j.close("2026-11-23 08:55", "TikTok")
        j.end("2026-11-23 09:00")
        var rules = Products.habitLock()
        rules.plugins = ["app", "monitor"]
        XCTAssertEqual(judge([rules], j), ["habit-lock usable-while-locked Instagram 08:01:00–08:02:00 by -",
                                           "habit-lock usable-while-locked TikTok 08:30:00–08:40:00 by -"])
        var approved = JournalBuilder(start: "2026-11-23 08:00")
        approved.authorizationRequest("2026-11-23 08:05", by: "app", answered: "approved")
        approved.open("2026-11-23 08:10", "Instagram")
        approved.close("2026-11-23 08:20", "Instagram")
        approved.end("2026-11-23 09:00")
        XCTAssertEqual(judge([rules], approved), ["habit-lock usable-while-locked Instagram 08:10:00–08:20:00 by -"])
    }

    func testShieldedDuringAnUnlock() {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.habits("2026-11-23 08:56")
        j.shield("2026-11-23 09:10", j.app("Instagram"))
        j.dismiss("2026-11-23 09:12", "Instagram")
        j.shield("2026-11-23 09:30", j.app("Maps"))                  // never selected: wrong at once
        j.dismiss("2026-11-23 09:30", "Maps")
        j.end("2026-11-23 10:00")
        XCTAssertEqual(judge([Products.habitLock()], j), ["habit-lock shielded-while-allowed Instagram 09:10:00–09:12:00 by -",
                                                          "habit-lock shielded-while-allowed Maps 09:30:00–09:30:00 by -"])
    }

    /// An unlock earned at 23:50 lasts its 30 minutes, past midnight: the person earned it.
    func testAnUnlockCrossingMidnight() {
        var j = JournalBuilder(start: "2026-11-23 23:00")
        j.habits("2026-11-23 23:50")
        j.open("2026-11-23 23:55", "Instagram")
        j.close("2026-11-24 00:15", "Instagram")
        j.shield("2026-11-24 00:16", j.app("TikTok"))               // still unlocked: wrong
        j.dismiss("2026-11-24 00:17", "TikTok")
        j.open("2026-11-24 00:25", "Instagram")                     // locked since 00:20
        j.close("2026-11-24 00:30", "Instagram")
        j.end("2026-11-24 01:00")
        XCTAssertEqual(judge([Products.habitLock()], j), ["habit-lock shielded-while-allowed TikTok 00:16:00–00:17:00 by -",
                                                          "habit-lock usable-while-locked Instagram 00:25:00–00:30:00 by -"])
    }

    /// Habits count per local day: two done before midnight and one after are no unlock.
    func testHabitsCountPerLocalDay() {
        var j = JournalBuilder(start: "2026-11-23 23:00")
        j.habits("2026-11-23 23:58", ["Read", "Walk"])
        j.habits("2026-11-24 00:01", ["Stretch"])
        j.open("2026-11-24 00:02", "Instagram")
        j.close("2026-11-24 00:04", "Instagram")
        j.end("2026-11-24 01:00")
        XCTAssertEqual(judge([Products.habitLock()], j), ["habit-lock usable-while-locked Instagram 00:02:00–00:04:00 by -"])
    }

    /// "Last decided": the monitor lifted Instagram's shield; a later write by another plugin that does not touch
    /// Instagram decides nothing about it.
    func testTheLastPluginThatChangedTheItemsShieldDecided() {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.store("2026-11-23 08:00", apps: ["Instagram", "TikTok"], writer: "monitor")
        j.habits("2026-11-23 08:56")
        j.store("2026-11-23 08:56", apps: [], writer: "monitor")
        j.store("2026-11-23 09:30", apps: ["TikTok"], writer: "shield")
        j.open("2026-11-23 09:40", "Instagram")
        j.close("2026-11-23 09:50", "Instagram")
        j.end("2026-11-23 10:00")
        XCTAssertEqual(judge([Products.habitLock()], j), ["habit-lock usable-while-locked Instagram 09:40:00–09:50:00 by monitor"])
    }

    /// A broker that crashed lost what was on screen: an app open at the crash is not usable after it.
    func testABrokerRestartInTheJournal() {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.habits("2026-11-23 08:56")
        j.open("2026-11-23 09:20", "Instagram")
        j.add("2026-11-23 09:22", "clock.tick", [:])
        j.add("2026-11-23 09:22", "bus.started", ["clock": "virtual"])
        j.end("2026-11-23 11:00")
        XCTAssertEqual(judge([Products.habitLock()], j), [])
    }

    /// A plugin cannot hide use by publishing the OS's topics itself: only the OS's events count.
    func testAPluginsFakeCloseIsIgnored() {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.open("2026-11-23 09:00", "Instagram")
        j.close("2026-11-23 09:00:30", "Instagram", source: "monitor")
        j.close("2026-11-23 09:10", "Instagram")
        j.end("2026-11-23 10:00")
        XCTAssertEqual(judge([Products.habitLock()], j), ["habit-lock usable-while-locked Instagram 09:00:00–09:10:00 by -"])
    }

    // MARK: Focus windows that end at or past midnight

    func testAFocusWindowEndingAtMidnight() {
        var j = JournalBuilder(start: "2026-11-23 21:00")
        j.open("2026-11-23 21:50", "Instagram")
        j.close("2026-11-23 22:00:30", "Instagram")               // within the grace minute
        j.open("2026-11-23 23:30", "Instagram")
        j.close("2026-11-23 23:45", "Instagram")
        j.open("2026-11-24 00:00:30", "Instagram")                // the window is over
        j.close("2026-11-24 00:10", "Instagram")
        j.shield("2026-11-24 00:00:40", j.app("TikTok"))          // within the grace minute after the window
        j.dismiss("2026-11-24 00:00:50", "TikTok")
        j.shield("2026-11-24 00:05", j.app("TikTok"))
        j.dismiss("2026-11-24 00:06", "TikTok")
        j.end("2026-11-24 01:00")
        XCTAssertEqual(judge([Products.focusWindow([("22:00", "00:00")])], j),
                       ["focus-window usable-while-locked Instagram 23:30:00–23:45:00 by -",
                        "focus-window shielded-while-allowed TikTok 00:05:00–00:06:00 by -"])
    }

    func testAFocusWindowPastMidnight() {
        var j = JournalBuilder(start: "2026-11-23 21:00")
        j.shield("2026-11-23 23:59", j.app("Instagram"))
        j.dismiss("2026-11-24 00:01", "Instagram")                 // midnight is inside the window
        j.open("2026-11-24 01:00", "Instagram")
        j.close("2026-11-24 01:30", "Instagram")
        j.open("2026-11-24 02:00", "TikTok")
        j.close("2026-11-24 02:30", "TikTok")
        j.end("2026-11-24 03:00")
        XCTAssertEqual(judge([Products.focusWindow([("22:00", "02:00")])], j),
                       ["focus-window usable-while-locked Instagram 01:00:00–01:30:00 by -"])
    }

    /// A grace pass ("Open for 5 minutes") lifts one app for its minutes; the others stay locked.
    func testAGracePassLiftsOneAppForItsMinutes() {
        var j = JournalBuilder(start: "2026-11-23 09:00")
        j.shield("2026-11-23 09:30", j.app("Instagram"))
        j.press("2026-11-23 09:30:10", .secondaryButtonPressed, on: "Instagram")
        j.dismiss("2026-11-23 09:30:10", "Instagram")
        j.open("2026-11-23 09:30:10", "Instagram")
        j.close("2026-11-23 09:36:10", "Instagram")                // the pass ended at 09:35:10, grace to 09:36:10
        j.open("2026-11-23 09:40", "Instagram")
        j.close("2026-11-23 09:41:30", "Instagram")
        j.end("2026-11-23 10:00")
        XCTAssertEqual(judge([Products.focusWindow([("09:00", "12:00")])], j),
                       ["focus-window usable-while-locked Instagram 09:40:00–09:41:30 by -"])
    }

    // MARK: The OS's own views

    /// Web limits, restricted sites: the OS's views are no product's shield, and what they cover is not usable.
    func testTheOSsOwnViewsAreNeitherUsableNorAProductShield() {
        var j = JournalBuilder(start: "2026-11-23 09:00")
        j.shield("2026-11-23 10:00", j.domain("instagram.com"), stores: ["screen-time-limits"], renderedBy: "system")
        j.dismiss("2026-11-23 10:30", "instagram.com")
        j.shield("2026-11-23 13:00", j.domain("poki.com"), stores: ["content-restrictions"], renderedBy: "system")  // outside focus, unselected
        j.dismiss("2026-11-23 13:05", "poki.com")
        j.shield("2026-11-23 10:40", j.app("TikTok"), renderedBy: "system")  // the default shield over the product's store
        j.dismiss("2026-11-23 10:45", "TikTok")
        j.end("2026-11-23 14:00")
        XCTAssertEqual(judge([Products.focusWindow([("09:00", "12:00")])], j), [])
    }

    func testPrivateBrowsingIsUseToo() {
        var j = JournalBuilder(start: "2026-11-23 09:00")
        j.visit("2026-11-23 10:00", "www.instagram.com", isPrivate: true)
        j.leave("2026-11-23 10:05", "www.instagram.com")
        j.end("2026-11-23 14:00")
        XCTAssertEqual(judge([Products.focusWindow([("09:00", "12:00")])], j),
                       ["focus-window usable-while-locked www.instagram.com 10:00:00–10:05:00 by -"])
    }

    // MARK: Speed bump

    /// The threshold is the day's use of the selection, counted by the checker: after an OS update the plugins'
    /// stale tokens shield nothing and no threshold callback comes, yet the app is past its threshold.
    func testASpeedBumpWithStaleTokensIsStillPastItsThreshold() {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.osUpdate("2026-11-23 08:05")
        j.open("2026-11-23 08:10", "Instagram")
        j.store("2026-11-23 08:30", apps: ["Instagram", "Facebook"], writer: "monitor", epoch: 0)  // stale: shields nothing
        j.close("2026-11-23 08:40", "Instagram")
        j.end("2026-11-23 09:00")
        XCTAssertEqual(judge([Products.speedBump()], j), ["speed-bump usable-while-locked Instagram 08:30:00–08:40:00 by monitor"])
    }

    /// "Dismiss" lets that app through and pauses the count for the cooldown; the count then starts from zero.
    func testASpeedBumpDismissAndTheNextThreshold() {
        func day(closingAt close: String) -> JournalBuilder {
            var j = JournalBuilder(start: "2026-11-23 08:00")
            j.open("2026-11-23 08:10", "Instagram")
            j.close("2026-11-23 08:30", "Instagram")                // the threshold: 20 minutes
            j.shield("2026-11-23 08:30", j.app("Instagram"))
            j.press("2026-11-23 08:31", .primaryButtonPressed, on: "Instagram")
            j.dismiss("2026-11-23 08:31", "Instagram")
            j.open("2026-11-23 08:31", "Instagram")                 // counts for nothing: the cooldown runs to 08:46
            j.close("2026-11-23 08:40", "Instagram")
            j.open("2026-11-23 08:50", "Instagram")                 // 20 minutes from 08:50: the next lock at 09:10
            j.close(close, "Instagram")
            j.end("2026-11-23 10:00")
            return j
        }
        XCTAssertEqual(judge([Products.speedBump()], day(closingAt: "2026-11-23 09:11")), [])
        XCTAssertEqual(judge([Products.speedBump()], day(closingAt: "2026-11-23 09:11:01")),
                       ["speed-bump usable-while-locked Instagram 09:10:00–09:11:01 by -"])
    }

    /// Use after a cooldown's end, then a revocation and an approval: the count starts again at the approval (the
    /// lead's ruling, docs/explore.md "A revocation after a cooldown"), so the 10 minutes 08:50–09:00 are forgiven — but
    /// a lock later than 20 minutes from the approval is still late, and an approval during the cooldown changes nothing.
    func testAfterACooldownARevocationRestartsTheCountAtTheApproval() {
        /// `lost`: each revocation in Settings with its approval.
        func day(lost: [(revoked: String, approved: String)], closingAt close: String) -> JournalBuilder {
            var j = JournalBuilder(start: "2026-11-23 08:00")
            j.authorizationRequest("2026-11-23 08:01", by: "app", answered: "approved")
            j.open("2026-11-23 08:10", "Instagram")
            j.close("2026-11-23 08:30", "Instagram")                // the threshold: 20 minutes
            j.shield("2026-11-23 08:30", j.app("Instagram"))
            j.press("2026-11-23 08:31", .primaryButtonPressed, on: "Instagram")
            j.dismiss("2026-11-23 08:31", "Instagram")               // the cooldown runs to 08:46
            j.open("2026-11-23 08:50", "Instagram")                 // 10 minutes of the next count
            j.close("2026-11-23 09:00", "Instagram")
            for (revoked, approved) in lost {
                j.authorizationChanged("2026-11-23 " + revoked, "denied")
                j.authorizationChanged("2026-11-23 " + approved, "approved")
            }
            j.open("2026-11-23 10:00", "Instagram")                 // 20 minutes from the last approval
            j.close(close, "Instagram")
            j.end("2026-11-23 11:00")
            return j
        }
        var rules = Products.speedBump()
        rules.plugins = ["app", "monitor"]
        XCTAssertEqual(judge([rules], day(lost: [("09:10", "09:30")], closingAt: "2026-11-23 10:21")), [])
        XCTAssertEqual(judge([rules], day(lost: [("09:10", "09:30")], closingAt: "2026-11-23 10:21:01")),
                       ["speed-bump usable-while-locked Instagram 10:20:00–10:21:01 by -"])
        // Without the revocation the count runs from the cooldown's end: locked at 10:10.
        XCTAssertEqual(judge([rules], day(lost: [], closingAt: "2026-11-23 10:21")),
                       ["speed-bump usable-while-locked Instagram 10:10:00–10:21:00 by -"])
        // Approved during the cooldown: its end starts the count, as without a revocation.
        XCTAssertEqual(judge([rules], day(lost: [("08:35", "08:40")], closingAt: "2026-11-23 10:21")),
                       ["speed-bump usable-while-locked Instagram 10:10:00–10:21:00 by -"])
        // Two lost authorizations before the threshold: the count starts at the last approval (09:40: locked at 10:20).
        XCTAssertEqual(judge([rules], day(lost: [("09:10", "09:20"), ("09:25", "09:40")], closingAt: "2026-11-23 10:21")), [])
    }

    /// Instagram past its 20-minute threshold at 08:30 (Berlin), dismissed at 08:31 and `second` s, the cooldown to 08:46
    /// and as many, used on until `seconds` past its count's 20 minutes (09:06 and `second` s); `meanwhile` adds what
    /// comes during that use.
    func instagramDismissed(atSecond second: Int, quirks: [String]?, pastTheThreshold seconds: Int,
                            meanwhile: (inout JournalBuilder) -> Void) -> JournalBuilder {
        let dismissed = String(format: "2026-11-23 08:31:%02d", second)
        var j = JournalBuilder(start: "2026-11-23 08:00", quirks: quirks)
        j.open("2026-11-23 08:10", "Instagram")
        j.close("2026-11-23 08:30", "Instagram")                // the threshold: 20 minutes
        j.shield("2026-11-23 08:30", j.app("Instagram"))
        j.press(dismissed, .primaryButtonPressed, on: "Instagram")
        j.dismiss(dismissed, "Instagram")
        j.open(dismissed, "Instagram")
        meanwhile(&j)
        j.close(String(format: "2026-11-23 09:%02d:%02d", 6 + (second + seconds) / 60, (second + seconds) % 60), "Instagram")
        j.end("2026-11-23 10:00")
        return j
    }

    /// The lead's ruling (docs/explore.md, "Two delays after a cooldown and a clock or zone change"): under
    /// `whole-minute-callbacks`, a threshold whose count restarted at a cooldown's end, with a clock or zone change
    /// between that end and the threshold, may come two minutes late; nothing else may. Instagram is dismissed at 08:31,
    /// the cooldown runs to 08:46, and used on, its count reaches 20 minutes at 09:06 (Berlin) whatever the zone.
    func testTwoMinutesForAThresholdAfterACooldownAndAChange() {
        func day(quirks: [String]?, change: String?, pastTheThreshold seconds: Int) -> JournalBuilder {
            instagramDismissed(atSecond: 0, quirks: quirks, pastTheThreshold: seconds) { j in
                if let change { j.timeZone(change, "Europe/London") }    // the same date, an hour back on the wall
            }
        }
        let wholeMinute = ["short-lived-extensions", "whole-minute-callbacks"]
        let afterTheCooldown = "2026-11-23 08:50"
        // The two delays, after the cooldown's end: two minutes, no more.
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: wholeMinute, change: afterTheCooldown, pastTheThreshold: 100)), [])
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: wholeMinute, change: afterTheCooldown, pastTheThreshold: 120)), [])
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: wholeMinute, change: afterTheCooldown, pastTheThreshold: 130)),
                       ["speed-bump usable-while-locked Instagram 08:06:00–08:08:10 by -"])
        // Without the change, or with it during the cooldown (the interval registered ahead still counts from its end): one.
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: wholeMinute, change: nil, pastTheThreshold: 100)),
                       ["speed-bump usable-while-locked Instagram 09:06:00–09:07:40 by -"])
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: wholeMinute, change: "2026-11-23 08:40", pastTheThreshold: 100)),
                       ["speed-bump usable-while-locked Instagram 08:06:00–08:07:40 by -"])
        // Without `whole-minute-callbacks` (faithful, or a journal that names no quirks): one minute.
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: [], change: afterTheCooldown, pastTheThreshold: 100)),
                       ["speed-bump usable-while-locked Instagram 08:06:00–08:07:40 by -"])
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: nil, change: afterTheCooldown, pastTheThreshold: 100)),
                       ["speed-bump usable-while-locked Instagram 08:06:00–08:07:40 by -"])
    }

    /// The ruling's two delays when the cooldown ends in the second pass of a repeated hour (docs/explore.md, "A cooldown
    /// ending in a repeated hour"): no interval can start there, so the count is registered from the end warning's
    /// whole-minute callback. Berlin's fall-back: Instagram dismissed at 02:50 CEST, the cooldown to 02:05 CET, its 20
    /// minutes at 02:25 CET — or all an hour earlier, the cooldown ending in the first pass, where the interval
    /// registered ahead counts from its end: one minute.
    func testTwoMinutesForAThresholdAfterACooldownEndingInARepeatedHour() {
        func day(quirks: [String]?, secondPass: Bool, pastTheThreshold seconds: Int) -> JournalBuilder {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss'Z'"
            let shift: TimeInterval = secondPass ? 0 : -3600
            let at = { (utc: String) in formatter.string(from: JournalBuilder.parse(utc, in: TimeZone(identifier: "UTC")!).addingTimeInterval(shift)) }
            var j = JournalBuilder(start: at("2026-10-24 22:30"), quirks: quirks)
            j.open(at("2026-10-24 23:30"), "Instagram")
            j.close(at("2026-10-24 23:50"), "Instagram")             // the threshold: 20 minutes
            j.shield(at("2026-10-24 23:50"), j.app("Instagram"))
            j.press(at("2026-10-25 00:50"), .primaryButtonPressed, on: "Instagram")
            j.dismiss(at("2026-10-25 00:50"), "Instagram")
            j.open(at("2026-10-25 00:50"), "Instagram")               // the cooldown to 01:05 UTC, 20 minutes more at 01:25
            j.close(at(String(format: "2026-10-25 01:%02d:%02d", 25 + seconds / 60, seconds % 60)), "Instagram")
            j.end(at("2026-10-25 02:30"))
            return j
        }
        let wholeMinute = ["short-lived-extensions", "whole-minute-callbacks"]
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: wholeMinute, secondPass: true, pastTheThreshold: 100)), [])
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: wholeMinute, secondPass: true, pastTheThreshold: 120)), [])
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: wholeMinute, secondPass: true, pastTheThreshold: 130)),
                       ["speed-bump usable-while-locked Instagram 02:25:00–02:27:10 by -"])
        // In the first pass, or without `whole-minute-callbacks`: one minute.
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: wholeMinute, secondPass: false, pastTheThreshold: 100)),
                       ["speed-bump usable-while-locked Instagram 02:25:00–02:26:40 by -"])
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: nil, secondPass: true, pastTheThreshold: 100)),
                       ["speed-bump usable-while-locked Instagram 02:25:00–02:26:40 by -"])
    }

    /// The first of the two delays loses *use*, not time (speed-bump 10563): the daily registration misses up to a minute
    /// of the count, so the OS's crossing waits for that much more use, however long the person paused. Instagram, as
    /// above, used 30 s past its threshold (09:06, Berlin), put away, and opened again at 12:00 for `seconds`: 30 s more
    /// reach the minute of use, and the crossing may then come a minute late.
    func testTheTwoDelaysFirstMinuteIsAMinuteOfUse() {
        func day(quirks: [String]?, reopenedFor seconds: Int) -> JournalBuilder {
            var j = JournalBuilder(start: "2026-11-23 08:00", quirks: quirks)
            j.open("2026-11-23 08:10", "Instagram")
            j.close("2026-11-23 08:30", "Instagram")                // the threshold: 20 minutes
            j.shield("2026-11-23 08:30", j.app("Instagram"))
            j.press("2026-11-23 08:31", .primaryButtonPressed, on: "Instagram")
            j.dismiss("2026-11-23 08:31", "Instagram")
            j.open("2026-11-23 08:31", "Instagram")                 // the cooldown to 08:46, the count's 20 minutes at 09:06
            j.timeZone("2026-11-23 08:50", "Europe/London")
            j.close("2026-11-23 09:06:30", "Instagram")
            j.open("2026-11-23 12:00", "Instagram")
            j.close(String(format: "2026-11-23 12:%02d:%02d", seconds / 60, seconds % 60), "Instagram")
            j.end("2026-11-23 13:00")
            return j
        }
        let wholeMinute = ["whole-minute-callbacks"]
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: wholeMinute, reopenedFor: 25)), [])
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: wholeMinute, reopenedFor: 90)), [])
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: wholeMinute, reopenedFor: 100)),
                       ["speed-bump usable-while-locked Instagram 11:00:00–11:01:40 by -"])
        // With one delay (no quirk list) the 30 s past the threshold are in its minute, the reopening is not.
        XCTAssertEqual(judge([Products.speedBump()], day(quirks: nil, reopenedFor: 25)),
                       ["speed-bump usable-while-locked Instagram 11:00:00–11:00:25 by -"])
    }

    /// The ruling's two delays when the activity limit, not a change, lost the interval registered ahead (speed-bump
    /// 9143, 9235): the OS refused the daily threshold's registration at the cooldown's end's whole minute.
    func testTwoMinutesForAThresholdAfterACooldownWithTheLimitFull() {
        func day(quirks: [String]? = ["whole-minute-callbacks"], refusedAt: String? = "2026-11-23 08:47",
                 withThreshold: Bool = true, pastTheThreshold seconds: Int) -> JournalBuilder {
            instagramDismissed(atSecond: 20, quirks: quirks, pastTheThreshold: seconds) { j in
                if let refusedAt { j.register(refusedAt, withThreshold: withThreshold, refused: true) }
            }
        }
        // Refused at the whole minute after the cooldown's end: two minutes, no more.
        XCTAssertEqual(judge([Products.speedBump()], day(pastTheThreshold: 100)), [])
        XCTAssertEqual(judge([Products.speedBump()], day(pastTheThreshold: 120)), [])
        XCTAssertEqual(judge([Products.speedBump()], day(pastTheThreshold: 130)),
                       ["speed-bump usable-while-locked Instagram 09:06:20–09:08:30 by -"])
        // Nothing refused, a check's window refused, a refusal after that minute, or no quirk: one minute.
        for other in [day(refusedAt: nil, pastTheThreshold: 100), day(withThreshold: false, pastTheThreshold: 100),
                      day(refusedAt: "2026-11-23 08:48", pastTheThreshold: 100), day(quirks: [], pastTheThreshold: 100),
                      day(quirks: nil, pastTheThreshold: 100)] {
            XCTAssertEqual(judge([Products.speedBump()], other), ["speed-bump usable-while-locked Instagram 09:06:20–09:08:00 by -"])
        }
    }

    /// The two minutes are that threshold's only: a lock from the day's own count (no cooldown before it) keeps one
    /// minute under `whole-minute-callbacks` and a zone change, and so does the other error kind.
    func testTheDaysFirstThresholdKeepsOneMinuteAfterAChange() {
        var j = JournalBuilder(start: "2026-11-23 08:00", quirks: ["whole-minute-callbacks"])
        j.open("2026-11-23 08:10", "Instagram")
        j.timeZone("2026-11-23 08:20", "Europe/London")
        j.close("2026-11-23 08:31:40", "Instagram")                  // the threshold at 08:30 (Berlin), 100 s past it
        j.end("2026-11-23 10:00")
        XCTAssertEqual(judge([Products.speedBump()], j), ["speed-bump usable-while-locked Instagram 07:30:00–07:31:40 by -"])
    }

    func testASpeedBumpDayEndsAtLocalMidnight() {
        var j = JournalBuilder(start: "2026-11-23 23:00")
        j.open("2026-11-23 23:10", "Facebook")
        j.close("2026-11-23 23:40", "Facebook")                     // locked from 23:30
        j.shield("2026-11-24 00:30", j.app("Facebook"))            // a new day: nothing used yet
        j.dismiss("2026-11-24 00:31", "Facebook")
        j.end("2026-11-24 01:00")
        XCTAssertEqual(judge([Products.speedBump()], j), ["speed-bump usable-while-locked Facebook 23:30:00–23:40:00 by -",
                                                          "speed-bump shielded-while-allowed Facebook 00:30:00–00:31:00 by -"])
    }

    /// The OS counts the day its device clock shows: set forward past midnight, the clock starts the count again from
    /// the device's midnight, which no product can undo.
    func testADeviceClockSetForwardPastMidnightStartsTheCountAgain() {
        func day(settingTheClock: Bool, usingLater: Bool = false) -> JournalBuilder {
            var j = JournalBuilder(start: "2026-11-23 20:00")
            j.open("2026-11-23 20:30", "Instagram")
            j.close("2026-11-23 20:45", "Instagram")                  // 15 minutes of the threshold's 20
            if settingTheClock {                                          // the device shows 00:30: its day began at 22:00
                j.add("2026-11-23 22:30", "device.clock-changed", ["offsetMs": .int(2 * 3_600_000)])
            }
            j.open("2026-11-23 22:40", "Instagram")                    // 15 minutes more
            j.close("2026-11-23 22:55", "Instagram")
            if usingLater {                                               // 15 + 5 since the device's midnight: 23:15
                j.open("2026-11-23 23:10", "Instagram")
                j.close("2026-11-23 23:25", "Instagram")
            }
            j.end("2026-11-23 23:30")
            return j
        }
        XCTAssertEqual(judge([Products.speedBump()], day(settingTheClock: false)), ["speed-bump usable-while-locked Instagram 22:45:00–22:55:00 by -"])
        XCTAssertEqual(judge([Products.speedBump()], day(settingTheClock: true)), [])
        XCTAssertEqual(judge([Products.speedBump()], day(settingTheClock: true, usingLater: true)),
                       ["speed-bump usable-while-locked Instagram 23:15:00–23:25:00 by -"])
    }

    /// The speed bump's day is the device's: with the clock set 3 h back, the day the OS counts goes on past the true
    /// midnight, to 03:00 (the device's midnight), and so does the lock; a clock set back after the true midnight to the
    /// previous date continues that date's count, the evening's use included (explore: speed-bump 33, 53, 129).
    func testTheSpeedBumpsDayIsTheDevicesDay() {
        var setBack = JournalBuilder(start: "2026-11-23 20:00")
        setBack.add("2026-11-23 20:05", "device.clock-changed", ["offsetMs": .int(-3 * 3_600_000)])
        setBack.open("2026-11-23 23:00", "Instagram")
        setBack.close("2026-11-23 23:25", "Instagram")                 // the threshold at 23:20
        setBack.shield("2026-11-24 01:00", setBack.app("Instagram"))   // still the device's Nov 23: right
        setBack.dismiss("2026-11-24 01:01", "Instagram")
        setBack.shield("2026-11-24 03:30", setBack.app("Facebook"))      // the device's Nov 24: nothing used yet
        setBack.dismiss("2026-11-24 03:31", "Facebook")
        setBack.end("2026-11-24 04:00")
        XCTAssertEqual(judge([Products.speedBump()], setBack), ["speed-bump usable-while-locked Instagram 23:20:00–23:25:00 by -",
                                                                "speed-bump shielded-while-allowed Facebook 03:30:00–03:31:00 by -"])

        var backToYesterday = JournalBuilder(start: "2026-11-23 20:00")
        backToYesterday.open("2026-11-23 23:00", "Instagram")
        backToYesterday.close("2026-11-23 23:15", "Instagram")         // 15 of the threshold's 20, on Nov 23
        backToYesterday.add("2026-11-24 00:30", "device.clock-changed", ["offsetMs": .int(-2 * 3_600_000)])  // Nov 23, 22:30
        backToYesterday.open("2026-11-24 00:40", "Instagram")          // 15 + 5: the threshold at 00:45
        backToYesterday.close("2026-11-24 00:50", "Instagram")
        backToYesterday.end("2026-11-24 01:00")
        XCTAssertEqual(judge([Products.speedBump()], backToYesterday), ["speed-bump usable-while-locked Instagram 00:45:00–00:50:00 by -"])
    }

    /// Tokyo to Los Angeles across the date line makes "today" the previous date, but the OS's day goes on: Tokyo's
    /// Nov 24, counted from Tokyo's midnight, as iOS counts an interval in the zone of its start. It ends at the first
    /// midnight Los Angeles shows after it began (08:00 UTC). The evening before Tokyo's midnight is not counted, though
    /// it falls in Los Angeles's Nov 23: read from Los Angeles's midnight, the threshold would come at the reopen.
    func testAZoneChangeAcrossTheDateLineContinuesTheDayBegunInTokyo() {
        var j = JournalBuilder(zone: "Asia/Tokyo", start: "2026-11-23 22:30")
        j.open("2026-11-23 23:00", "Instagram")
        j.close("2026-11-23 23:15", "Instagram")                     // 15 minutes on Tokyo's Nov 23
        j.open("2026-11-24 08:10", "Instagram")
        j.close("2026-11-24 08:25", "Instagram")                     // 15 minutes of the threshold's 20
        j.timeZone("2026-11-24 09:00", "America/Los_Angeles")        // Nov 23, 16:00 there: Tokyo's day runs to midnight there
        j.open("2026-11-24 09:30", "Instagram")                     // 15 + 5: the threshold at 09:35 (16:35 there)
        j.close("2026-11-24 09:40", "Instagram")
        j.end("2026-11-24 10:00")
        XCTAssertEqual(judge([Products.speedBump()], j, zone: "Asia/Tokyo"), ["speed-bump usable-while-locked Instagram 16:35:00–16:40:00 by -"])
    }

    // MARK: Zones and DST

    /// Hours are wall time in the zone in force: after a move to New York, 09:00–12:00 is New York's morning.
    func testATimeZoneChange() {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.timeZone("2026-11-23 10:00", "America/New_York")         // 04:00 in New York
        j.open("2026-11-23 10:30", "Instagram")                     // 04:30 there: free
        j.close("2026-11-23 11:00", "Instagram")
        j.open("2026-11-23 15:30", "Instagram")                     // 09:30 there: focus
        j.close("2026-11-23 15:40", "Instagram")
        j.end("2026-11-23 20:00")
        XCTAssertEqual(judge([Products.focusWindow([("09:00", "12:00")])], j),
                       ["focus-window usable-while-locked Instagram 09:30:00–09:40:00 by -"])
    }

    /// The fall-back night in Berlin (2026-10-25): 02:00–03:00 happens twice, and a 02:00–03:00 window is two hours.
    func testTheRepeatedHourOfADSTFallBack() {
        var j = JournalBuilder(start: "2026-10-24T22:00Z")
        j.open("2026-10-25T00:30Z", "Instagram")                    // 02:30 CEST, the first time
        j.close("2026-10-25T00:40Z", "Instagram")
        j.open("2026-10-25T01:30Z", "TikTok")                       // 02:30 CET, the second time
        j.close("2026-10-25T01:40Z", "TikTok")
        j.open("2026-10-25T02:30Z", "Instagram")                    // 03:30 CET: over
        j.close("2026-10-25T02:40Z", "Instagram")
        j.end("2026-10-25T04:00Z")
        XCTAssertEqual(judge([Products.focusWindow([("02:00", "03:00")])], j),
                       ["focus-window usable-while-locked Instagram 02:30:00–02:40:00 by -",
                        "focus-window usable-while-locked TikTok 02:30:00–02:40:00 by -"])
    }

    /// The spring-forward night (2026-03-29): 02:00–03:00 does not exist; a window 01:30–02:30 ends at the jump.
    func testTheSkippedHourOfADSTSpringForward() {
        var j = JournalBuilder(start: "2026-03-28T22:00Z")
        j.open("2026-03-29T00:45Z", "Instagram")                    // 01:45 CET
        j.close("2026-03-29T00:50Z", "Instagram")
        j.open("2026-03-29T01:10Z", "TikTok")                       // 03:10 CEST: over
        j.close("2026-03-29T01:20Z", "TikTok")
        j.end("2026-03-29T04:00Z")
        XCTAssertEqual(judge([Products.focusWindow([("01:30", "02:30")])], j),
                       ["focus-window usable-while-locked Instagram 01:45:00–01:50:00 by -"])
    }

    // MARK: Several products on one device

    /// Each product answers for its own stores and selection: a speed bump's shield over an app only the habit lock
    /// selected is the speed bump's error, and no error of the habit lock.
    func testSeveralProductsAreJudgedEachOnItsOwn() {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.habits("2026-11-23 08:56")
        j.shield("2026-11-23 09:10", j.app("TikTok"), stores: ["speed-bump"])   // the speed bump reached the habit lock's app
        j.dismiss("2026-11-23 09:11", "TikTok")
        j.open("2026-11-23 09:40", "Instagram")                                  // the habit lock's unlock is over
        j.close("2026-11-23 09:45", "Instagram")
        j.end("2026-11-23 10:00")
        let products = [Products.habitLock(store: "habit-lock"), Products.speedBump(store: "speed-bump")]
        let verdicts = LockInvariantChecker(products: products, timeZone: j.zone).verdicts(for: j.envelopes)
        XCTAssertEqual(verdicts.map(\.product), ["habit-lock", "speed-bump"])
        XCTAssertEqual(judge(products, j), ["habit-lock usable-while-locked Instagram 09:40:00–09:45:00 by -",
                                            "speed-bump shielded-while-allowed TikTok 09:10:00–09:11:00 by -"])
    }
}

/// Local times of violations, as the table writes them.
enum LockViolationFormat {
    static func time(_ date: Date, _ zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.hour, .minute, .second], from: date)
        return String(format: "%02d:%02d:%02d", c.hour!, c.minute!, c.second!)
    }
}
