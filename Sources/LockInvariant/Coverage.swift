import Configuration
import Foundation

/// What a journal exercised, counted: the edges of a product's promise it crossed (window starts and ends, unlocks,
/// passes granted and refused at the cap, thresholds, dismisses, overrides, sessions) and the device events around
/// them (clock and zone changes, DST transitions, broker crashes, iOS updates, revocations). "No failures in 1,000
/// days" weighs what those days went through.
public struct Coverage: Equatable, Sendable {
    /// Counter name → count; only counters a journal reached (a zero is left out).
    public var counts: [String: Int] = [:]

    public init(counts: [String: Int] = [:]) {
        self.counts = counts
    }

    mutating func add(_ name: String, _ count: Int) {
        if count > 0 { counts[name, default: 0] += count }
    }
}

extension ProductRules {
    /// What this journal exercised of the promise.
    func coverage(_ facts: JournalFacts) -> Coverage {
        var coverage = Coverage()
        let windows = windowPeriods(facts, strict: false).union(windowPeriods(facts, strict: true))
        coverage.add("window starts", windows.intervals.filter { $0.start > facts.range.start }.count)
        coverage.add("window ends", windows.intervals.filter { $0.end < facts.range.end }.count)
        coverage.add("unlocks earned", unlocks(facts).intervals.count)
        for pass in promise.passes {
            let presses = pressesFor(pass, facts: facts)
            coverage.add("\(pass.button.rawValue) passes granted", presses.granted.count)
            if pass.cap != nil { coverage.add("\(pass.button.rawValue) presses refused at the cap", presses.all.count - presses.granted.count) }
        }
        if let use = promise.locked.dailyUse {
            if let app = selectedApps.sorted().first {
                coverage.add("daily-use thresholds reached", dailyUseLocks(for: .app(app, category: nil), facts: facts).periods.intervals.count)
            }
            if let button = use.dismiss {
                coverage.add("dismisses", facts.presses.filter { $0.action == button.shieldAction && $0.target.isApp && isSelected($0.target) }.count)
            }
        }
        for override in promise.overrides { coverage.add("override \(override.appAction)", appActions(named: override.appAction, facts: facts).count) }
        for session in promise.locked.sessions { coverage.add("session \(session.start)", appActions(named: session.start, facts: facts).count) }
        return coverage
    }
}

extension JournalFacts {
    /// What the device went through in this journal, whatever the product.
    func deviceCoverage() -> Coverage {
        var coverage = Coverage()
        coverage.add("clock set", clockOffsets.count - 1)
        coverage.add("time-zone changes", zones.changes.count - 1)
        coverage.add("DST transitions", dstTransitions())
        coverage.add("broker crashes", brokerRestarts.count)
        coverage.add("iOS updates", osUpdates.count)
        coverage.add("authorization revoked", authorizations.filter { !$0.approved && $0.plugin == nil }.count)
        return coverage
    }

    /// The DST transitions of the zones in force while they were.
    private func dstTransitions() -> Int {
        var count = 0
        for (index, change) in zones.changes.enumerated() {
            let from = max(change.from, range.start)
            let to = index + 1 < zones.changes.count ? min(zones.changes[index + 1].from, range.end) : range.end
            var cursor = from
            while cursor < to, let next = change.zone.nextDaylightSavingTimeTransition(after: cursor), next < to {
                count += 1
                cursor = next
            }
        }
        return count
    }
}
