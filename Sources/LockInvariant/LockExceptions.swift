import Configuration
import Foundation

/// What lets a target through a lock: unlocks (habits, app actions), passes from a shield button (with their cap)
/// and pauses; and the sessions the person starts in the product's app (`locked.sessions`).
extension ProductRules {
    /// Every exception for a target: the instants a lenient lock does not hold.
    func exceptions(for target: Target, facts: JournalFacts) -> Periods {
        var open = unlocks(facts)
        for pass in promise.passes { open = open.union(passes(pass, for: target, facts: facts)) }
        for override in promise.overrides {
            guard case .pause(let minutes) = override.effect else { continue }
            open = open.union(Periods(appActions(named: override.appAction, facts: facts).map { DateInterval(start: $0, duration: Double(minutes) * 60) }))
        }
        return open
    }

    /// Each unlock lasts its minutes in true time from the moment it was earned — past midnight too: the person
    /// earned it. Habits count once each within the local day, and the one that completes the count earns it.
    func unlocks(_ facts: JournalFacts) -> Periods {
        var windows = Periods()
        for unlock in promise.unlocks {
            let duration = Double(unlock.minutes) * 60
            switch unlock.earned {
            case .habits(let required):
                var doneByDay: [Int: Set<String>] = [:]
                for completion in facts.habitCompletions {
                    let day = facts.zones.wallTime(at: completion.at).day
                    guard doneByDay[day, default: []].insert(completion.habit).inserted else { continue }
                    if doneByDay[day]!.count == required { windows.insert(DateInterval(start: completion.at, duration: duration)) }
                }
            case .appAction(let name):
                for at in appActions(named: name, facts: facts) { windows.insert(DateInterval(start: at, duration: duration)) }
            }
        }
        return windows
    }

    /// The passes a button grants `target`: each press on a selected target's shield (its own, or any for a product
    /// pass) within the cap, for the pass's minutes. A press inside a strict window or session grants nothing and
    /// counts toward no cap; one past the cap grants nothing.
    func passes(_ pass: Promise.Pass, for target: Target, facts: JournalFacts) -> Periods {
        if pass.appsOnly && !target.isApp { return Periods() }
        let granted = pressesFor(pass, facts: facts).granted
        let mine = pass.forProduct ? granted : granted.filter { $0.target == target }
        return Periods(mine.map { DateInterval(start: $0.at, duration: Double(pass.minutes) * 60) })
    }

    /// The presses of a pass's button on the selection's shields, outside strict windows and sessions, and those of them
    /// the cap lets through.
    func pressesFor(_ pass: Promise.Pass, facts: JournalFacts) -> (all: [JournalFacts.Press], granted: [JournalFacts.Press]) {
        let strict = windowPeriods(facts, strict: true).union(sessionPeriods(facts, strict: true))
        let presses = facts.presses.filter {
            $0.action == pass.button.shieldAction && isSelected($0.target) && (!pass.appsOnly || $0.target.isApp)
                && strict.overlapping(from: $0.at, to: $0.at, orAt: true).isEmpty
        }
        return (presses, pass.cap.map { cap in withinCap(presses, cap: cap, per: pass.capPer, facts: facts) } ?? presses)
    }

    /// The presses a cap lets through, counted per window occurrence (of the first window, in declaration order, that
    /// holds the press; a press outside every window counts toward its device day) or per device day.
    private func withinCap(_ presses: [JournalFacts.Press], cap: Int, per period: Promise.Pass.CapPeriod, facts: JournalFacts) -> [JournalFacts.Press] {
        let each = period == .window ? lenientWindowOccurrences(facts) : []
        let days = facts.deviceDays()
        var used: [String: Int] = [:]
        return presses.filter { press in
            let bucket: String
            if let (window, index) = each.enumerated().lazy.compactMap({ window, occurrences in
                occurrences.intervals.firstIndex { $0.start <= press.at && press.at < $0.end }.map { (window, $0) }
            }).first {
                bucket = "window \(window) occurrence \(index)"
            } else {
                bucket = "day \(days.firstIndex { $0.start <= press.at && press.at < $0.end } ?? -1)"
            }
            guard used[bucket, default: 0] < cap else { return false }
            used[bucket, default: 0] += 1
            return true
        }
    }

    /// The sessions of this strictness: from each start action for the session's minutes, or to the next stop action
    /// (a strict session's stop is refused while its minutes run).
    func sessionPeriods(_ facts: JournalFacts, strict: Bool) -> Periods {
        var periods = Periods()
        for session in promise.locked.sessions where session.strict == strict {
            let stops = session.stop.map { appActions(named: $0, facts: facts) } ?? []
            for start in appActions(named: session.start, facts: facts) {
                var end = session.minutes.map { start.addingTimeInterval(Double($0) * 60) } ?? facts.range.end
                if !session.strict || session.minutes == nil, let stop = stops.first(where: { $0 > start }) { end = min(end, stop) }
                periods.insert(DateInterval(start: start, end: min(max(start, end), facts.range.end)))
            }
        }
        return periods
    }
}
