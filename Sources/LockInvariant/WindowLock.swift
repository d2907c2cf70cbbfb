import Configuration
import Foundation

/// The window lock (`locked.windows`): wall-clock windows in the zone in force, on the days they start on, and the
/// app actions that lift an occurrence ("skip tonight", "end early").
extension ProductRules {
    /// Whenever the wall clock in the zone in force shows a time within a window of this strictness.
    func windowPeriods(_ facts: JournalFacts, strict: Bool) -> Periods {
        let windows = promise.locked.windows.filter { $0.strict == strict }
        guard !windows.isEmpty else { return Periods() }
        return facts.zones.periods(in: facts.range, boundaries: windows.flatMap { [Double($0.start), Double($0.end)] }) { wall in
            windows.contains { $0.contains(wall) }
        }
    }

    /// The occurrences the person's overrides lifted: "skip" lifts the occurrence in progress or else the next one to
    /// start within a day of the action; "end" lifts the rest of the one in progress.
    func liftedWindows(_ windows: Periods, facts: JournalFacts) -> Periods {
        var lifted = Periods()
        for override in promise.overrides where override.effect.isWindowEffect {
            for action in appActions(named: override.appAction, facts: facts) {
                let occurrence = windows.intervals.first { $0.end > action }
                guard let occurrence else { continue }
                switch override.effect {
                case .skipWindow:
                    guard occurrence.start <= action.addingTimeInterval(86_400) else { continue }
                    lifted.insert(DateInterval(start: max(occurrence.start, action), end: occurrence.end))
                case .endWindow:
                    guard occurrence.start <= action else { continue }
                    lifted.insert(DateInterval(start: action, end: occurrence.end))
                case .pause:
                    continue
                }
            }
        }
        return lifted
    }

    /// When the person did `name` in the product's app.
    func appActions(named name: String, facts: JournalFacts) -> [Date] {
        facts.appActions.filter { $0.action == name && (companionApp == nil || $0.app == companionApp) }.map(\.at)
    }
}

extension Promise.Window {
    /// Whether a wall time falls within this window, counting an overnight window's morning to the day it started.
    func contains(_ wall: ZoneTimeline.WallTime) -> Bool {
        let second = Int(wall.secondOfDay.rounded(.down))
        if start < end { return (start..<end).contains(second) && startsOn(day: wall.day) }
        return (second >= start && startsOn(day: wall.day)) || (second < end && startsOn(day: wall.day - 1))
    }

    /// Whether the window starts on a local date (days since 1970-01-01, a Thursday).
    func startsOn(day: Int) -> Bool {
        if let weekdays, !weekdays.contains(((day % 7) + 7 + 4) % 7) { return false }
        if let dates, !dates.contains(Self.dateText(day: day)) { return false }
        return true
    }

    static func dateText(day: Int) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(day) * 86_400))
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }
}
