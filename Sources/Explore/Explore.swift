// Explore: find the day that breaks a product — generate seeded days of a person, play each through the real
// broker and plugins, check the lock invariant and the scenario's expectations, shrink a failure, write it out.

import Configuration
import Foundation

/// One generated step: how long after the previous one (or the start) it happens, and its action as YAML.
public struct DayStep: Equatable, Sendable {
    /// Seconds after the previous step.
    public var gap: Int
    /// The action's key and value, as in a scenario file: `open: Instagram`, `visit: {url: "…", tab: 2}`.
    public var action: String
    /// The app the step names, if any (the shrinker tries fewer apps).
    public var app: String?

    public init(gap: Int, action: String, app: String? = nil) {
        self.gap = gap
        self.action = action
        self.app = app
    }
}

/// A generated day of a person: a scenario, from its seed.
public struct Day: Equatable, Sendable {
    public var seed: UInt64
    public var profile: String
    /// The iOS release the day is played on (`IOSRelease`'s name), or nil for none.
    public var release: String?
    public var timeZone: String
    /// The local start, `YYYY-MM-DDTHH:MM`.
    public var start: String
    public var steps: [DayStep]
    /// How long the run goes on after the last step, in seconds (so that an unlock that should end is seen to end).
    public var tail: Int

    public init(seed: UInt64, profile: String, release: String? = nil, timeZone: String, start: String, steps: [DayStep], tail: Int) {
        self.seed = seed
        self.profile = profile
        self.release = release
        self.timeZone = timeZone
        self.start = start
        self.steps = steps
        self.tail = tail
    }

    /// The day as a scenario file: steps timed by `after:` (elapsed time, unambiguous across clock changes).
    public func scenarioText(name: String, comment: String? = nil) -> String {
        var lines = comment.map { $0.split(separator: "\n").map { "# \($0)" } } ?? []
        lines += ["name: \(name)", "start: \(start)", "timeZone: \(timeZone)", "profile: \(profile)"]
        if let release { lines.append("ios: \"\(release)\"") }
        lines += ["seed: \(seed)", "end: after \(Self.duration(tail))"]
        lines.append(steps.isEmpty ? "steps: []" : "steps:")
        for step in steps { lines.append("  - after: \(Self.duration(step.gap))\n    \(step.action)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `0s`, `90s`, `12m`, `1h5m`, `2h0m30s`: what `after:` reads.
    static func duration(_ seconds: Int) -> String { Scenario.durationText(seconds) }
}
