import Configuration
import Foundation

/// The window lock (`locked.windows`): wall-clock windows in the zone in force, on the days they start on, and the
/// app actions that lift an occurrence ("skip tonight", "end early").
extension ProductRules {
    /// Whenever the wall clock in the zone in force shows a time within a window of this strictness.
    func windowPeriods(_ facts: JournalFacts, strict: Bool) -> Periods {
        periods(of: promise.locked.windows.filter { $0.strict == strict }, facts)
    }

    /// Whenever the wall clock in the zone in force shows a time within one of `windows`.
    func periods(of windows: [Promise.Window], _ facts: JournalFacts) -> Periods {
        guard !windows.isEmpty else { return Periods() }
        return facts.zones.periods(in: facts.range, boundaries: windows.flatMap { [Double($0.start), Double($0.end)] }) { wall in
            windows.contains { $0.contains(wall) }
        }
    }

    /// Each lenient window's own periods (its occurrences), in declaration order.
    func lenientWindowOccurrences(_ facts: JournalFacts) -> [Periods] {
        promise.locked.windows.filter { !$0.strict }.map { periods(of: [$0], facts) }
    }

    /// The lenient windows' lock: each window's occurrences less what the person's overrides lifted of that window.
    func lenientWindowLock(_ facts: JournalFacts) -> Periods {
        let each = lenientWindowOccurrences(facts)
        let lifted = liftedWindows(each, facts: facts)
        return zip(each, lifted).reduce(Periods()) { $0.union($1.0.subtracting($1.1)) }
    }

    /// What the person's overrides lifted of each window (by index): "end" lifts the rest of every occurrence in
    /// progress; "skip" lifts those in progress too or, when none is, the next occurrence to start within a day (of
    /// every window that starts then) — a skip or an end lifts a profile, not the others that overlap it.
    func liftedWindows(_ each: [Periods], facts: JournalFacts) -> [Periods] {
        var lifted = [Periods](repeating: Periods(), count: each.count)
        for override in promise.overrides where override.effect.isWindowEffect {
            for action in appActions(named: override.appAction, facts: facts) {
                var inProgress = false
                for (index, occurrences) in each.enumerated() {
                    guard let occurrence = occurrences.intervals.first(where: { $0.start <= action && $0.end > action }) else { continue }
                    lifted[index].insert(DateInterval(start: action, end: occurrence.end))
                    inProgress = true
                }
                guard override.effect == .skipWindow, !inProgress else { continue }
                let next = each.map { $0.intervals.first { $0.start > action } }
                guard let start = next.compactMap(\.?.start).min(), start <= action.addingTimeInterval(86_400) else { continue }
                for (index, occurrence) in next.enumerated() where occurrence?.start == start { lifted[index].insert(occurrence!) }
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
