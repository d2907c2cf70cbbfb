import Foundation
import MonitorKit
import ShieldBusSDK

/// The profiles, the App Group's keys and the activities' names the product's extensions and app share.
enum Profiles {
    static let product = MonitoredProduct(name: "profiles", group: "group.dev.shieldbus.profiles")
    /// Ends early on the person's word ("end-evening").
    static let evening = WallClockWindow(start: ClockTime("21:00")!, end: ClockTime("08:00")!)
    /// Strict: no break, no ending early (weekdays as `Calendar` numbers them: Monday 2 … Friday 6).
    static let workday = WallClockWindow(start: ClockTime("05:00")!, end: ClockTime("20:00")!, weekdays: [2, 3, 4, 5, 6])
    static let breakMinutes = 15
    /// The seeded flaw of the naive twin (Config/naive-profiles.yml), if any.
    static var flaw: String { PluginEnvironment["PROFILES_FLAW"] ?? "" }

    // The app's slice: the pick (`product.selectionKey`) and the person's choices.
    static let sessionKey = "session.active"
    static let endedEveningKey = "evening.endedAt"
    static let breakKey = "break.at"
    static let choiceKeys = [sessionKey, endedEveningKey, breakKey]

    static var now: Date { BusClock.absoluteNow }

    /// What the App Group says the person did, read once per decision.
    struct Choices {
        var sessionActive = false
        var endedEveningAt: Date?
        var breakAt: Date?

        /// The zones in force over time (the monitor keeps the history).
        var zones = ZoneReading()

        init(_ defaults: SharedDefaults, zones: ZoneReading) {
            self.zones = zones
            sessionActive = ((try? defaults.value(Bool.self, forKey: Profiles.sessionKey)) ?? nil) ?? false
            endedEveningAt = ((try? defaults.double(forKey: Profiles.endedEveningKey)) ?? nil).map(Date.init(timeIntervalSince1970:))
            breakAt = ((try? defaults.double(forKey: Profiles.breakKey)) ?? nil).map(Date.init(timeIntervalSince1970:))
        }

        var breakEnd: Date? { breakAt.map { $0.addingTimeInterval(Double(Profiles.breakMinutes) * 60) } }

        /// Whether the selection is locked at `date`: the strict workday always; the evening (unless ended early in
        /// this occurrence) and a deep-work session, unless a break runs.
        func isLocked(at date: Date) -> Bool {
            let onBreak = breakAt.map { $0 <= date && date < breakEnd! } ?? false
            if Profiles.workday.contains(date) { return Profiles.flaw == "break-ends-strict" ? !onBreak : true }
            let endedEvening = endedEveningAt.map { ended in
                Profiles.evening.occurrenceStart(containing: date, zones: zones).map { $0 <= ended && ended <= date } ?? false
            } ?? false
            return (Profiles.evening.contains(date) && !endedEvening || sessionActive) && !onBreak
        }
    }
}
