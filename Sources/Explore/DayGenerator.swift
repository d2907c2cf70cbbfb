import Configuration
import Foundation

/// What the generator needs to know of the products on a device: their apps and web domains, picked or not, and
/// their own apps.
public struct ProductSurface: Sendable {
    public var companionApps: [String]
    public var selectedApps: [String]
    public var otherApps: [String]
    public var selectedDomains: [String]
    public var otherDomains: [String]
    /// The person's actions in the products' apps that their promises name, each with its app (nil: the device's one).
    public var appActions: [(app: String?, action: String)] = []
    /// The shield buttons whose passes have a cap, with the largest cap: days press them up to and past it.
    public var cappedButtons: [(button: String, cap: Int, minutes: Int)] = []
    /// The promises' wall-clock windows (seconds of the local day; an end at or before the start ends the next day):
    /// the generator presses and skips around them.
    public var windows: [(start: Int, end: Int)] = []
    /// The habits the products' apps offer, in their order (`habits:`; `[]`: none); nil: any name goes.
    public var habits: [String]?

    public init(companionApps: [String], selectedApps: [String], otherApps: [String], selectedDomains: [String], otherDomains: [String]) {
        self.companionApps = companionApps
        self.selectedApps = selectedApps
        self.otherApps = otherApps
        self.selectedDomains = selectedDomains
        self.otherDomains = otherDomains
    }

    /// From a configuration and its catalog: every product's picked apps and domains (a picked category's apps count
    /// as picked), and their apps.
    public init(configuration: ShieldBusConfiguration, catalog: AppCatalog) {
        let products = configuration.resolvedProducts
        let companions = products.compactMap(\.companionApp)
        companionApps = companions
        let categories = Set(products.flatMap(\.selectionCategories))
        let picked = Set(products.flatMap(\.selectionApps).compactMap { catalog.app(named: $0)?.name })
        let apps = catalog.apps.filter { !companions.contains($0.name) }
        let selected = apps.filter { picked.contains($0.name) || categories.contains($0.categoryID) }.map(\.name)
        selectedApps = selected
        otherApps = Array(apps.filter { !selected.contains($0.name) }.map(\.name).prefix(6))
        var domains: [String] = []
        for domain in products.flatMap(\.selectionDomains) where !domains.contains(domain) { domains.append(domain) }
        selectedDomains = domains
        otherDomains = ["github.com", "wikipedia.org", "nytimes.com"].filter { !domains.contains($0) }
        habits = OfferedHabits(configuration: configuration).names
        for product in products {
            guard let promise = product.promise else { continue }
            let app = products.count > 1 ? product.companionApp : nil
            appActions += promise.appActions.map { (app, $0) }
            windows += (promise.locked.windows + promise.hints.windows).map { ($0.start, $0.end) }
            if let run = promise.hints.repeatedPresses { cappedButtons.append((run.button.rawValue, run.times - 1, max(0, run.apartMinutes - 1))) }
            for pass in promise.passes {
                guard let cap = pass.cap else { continue }
                if let index = cappedButtons.firstIndex(where: { $0.button == pass.button.rawValue }) {
                    cappedButtons[index].cap = max(cappedButtons[index].cap, cap)
                    cappedButtons[index].minutes = max(cappedButtons[index].minutes, pass.minutes)
                } else {
                    cappedButtons.append((pass.button.rawValue, cap, pass.minutes))
                }
            }
        }
    }
}

/// Generates days of a person from a seed, with weights: the same seed gives the same day, byte for byte.
///
/// A day covers, with weights: opening and closing picked and other apps, habits, web pages in public and
/// private tabs (and switching tabs), both shield buttons, force-quits, backgrounding for minutes to over
/// twelve hours, device restarts, iOS updates, device clock and time-zone changes, DST dates in several
/// zones, days that run past midnight, the broker crashing mid-day, the 20-activity limit filled around an unlock, and
/// FamilyControls authorization revoked in Settings and allowed again later. Under `ios-realistic` the scenario's
/// seed is the day's, so the quirks' fates vary by seed.
public struct DayGenerator {
    public let surface: ProductSurface

    public init(surface: ProductSurface) {
        self.surface = surface
    }

    /// Time zones and dates the days start on: ordinary days and the DST changes of 2026 (spring forward and
    /// fall back, with the repeated hour) in zones of three continents.
    static let calendar: [(zone: String, dates: [String])] = [
        ("Europe/Berlin", ["2026-11-24", "2026-03-28", "2026-03-29", "2026-10-24", "2026-10-25"]),
        ("America/New_York", ["2026-11-24", "2026-03-07", "2026-03-08", "2026-10-31", "2026-11-01"]),
        ("Australia/Sydney", ["2026-11-24", "2026-04-04", "2026-04-05", "2026-10-03", "2026-10-04"]),
        ("Asia/Tokyo", ["2026-11-24"]),
    ]
    static let travelZones = ["Europe/London", "America/New_York", "America/Los_Angeles", "Asia/Tokyo", "Australia/Sydney", "UTC"]

    public func day(seed: UInt64, profile: String) -> Day {
        var random = SeededRandom(seed: seed)
        let place = Self.calendar.randomElement(using: &random)!
        let date = place.dates.randomElement(using: &random)!
        // Some days start late in the evening so that unlocks and sessions cross midnight (and the 02:00–03:00 of a DST change).
        let startMinute = Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: (21 * 60)...(23 * 60 + 30), using: &random)
                                                                     : Int.random(in: (6 * 60)...(9 * 60), using: &random)
        let start = String(format: "%@T%02d:%02d", date, startMinute / 60, startMinute % 60)
        var steps: [DayStep] = []
        var habits = 0
        let count = Int.random(in: 20...60, using: &random)
        func pick(_ list: [String]) -> String? { list.isEmpty ? nil : list.randomElement(using: &random) }
        // One product's app is taken without a draw: a draw here would shift every later draw of a one-product seed.
        func companion() -> String? { surface.companionApps.count > 1 ? pick(surface.companionApps) : surface.companionApps.first }
        while steps.count < count {
            var gap = Int.random(in: 10...(25 * 60), using: &random)
            let roll = Int.random(in: 0..<100, using: &random)
            var step: DayStep?
            switch roll {
            case 0..<22: if let app = pick(surface.selectedApps) { step = DayStep(gap: gap, action: "open: \(app)", app: app) }
            case 22..<30: if let app = pick(surface.otherApps) { step = DayStep(gap: gap, action: "open: \(app)", app: app) }
            case 30..<42:
                if let app = companion() {
                    step = DayStep(gap: gap, action: "open: \(app)")
                    if habits < 3, Int.random(in: 0..<5, using: &random) > 0 {
                        steps.append(step!)
                        habits += 1
                        step = DayStep(gap: Int.random(in: 5...40, using: &random), action: Self.habitPlaceholder(habits))
                    }
                }
            case 42..<48: step = DayStep(gap: Int.random(in: 2...30, using: &random), action: "press: primary")
            case 48..<54: step = DayStep(gap: Int.random(in: 2...30, using: &random), action: "press: secondary")
            case 54..<62:
                let domains = surface.selectedDomains + surface.otherDomains
                if let domain = pick(domains) {
                    let isPrivate = Int.random(in: 0..<4, using: &random) == 0
                    step = DayStep(gap: gap, action: "visit: {url: \"https://www.\(domain)/\", tab: \(Int.random(in: 1...3, using: &random)), private: \(isPrivate)}")
                }
            case 62..<65: step = DayStep(gap: gap, action: "switchTab: \(Int.random(in: 1...3, using: &random))")
            case 65..<75: step = DayStep(gap: gap, action: Bool.random(using: &random) ? "home: true" : "close:")
            case 75..<80:
                // The phone put away: minutes to more than twelve hours.
                gap = [Int.random(in: 30...90, using: &random) * 60, Int.random(in: 2...13, using: &random) * 3600][Int.random(in: 0...1, using: &random)]
                step = DayStep(gap: gap, action: "home: true")
            case 80..<84: if let app = companion() { step = DayStep(gap: gap, action: "forceQuit: \(app)") }
            case 84..<86: step = DayStep(gap: gap, action: "restart: true")
            case 86..<88: step = DayStep(gap: gap, action: "osUpdate: true")
            case 88..<91:
                let hours = Int.random(in: 1...12, using: &random) * (Bool.random(using: &random) ? 1 : -1)
                step = DayStep(gap: gap, action: "setClock: \"\(hours > 0 ? "+" : "-")\(abs(hours))h\"")
            case 91..<94: step = DayStep(gap: gap, action: "timeZone: \(Self.travelZones.randomElement(using: &random)!)")
            case 94..<96: step = DayStep(gap: gap, action: "crashBroker: true")
            default: step = DayStep(gap: gap, action: "close:")
            }
            if let step { steps.append(step) }
        }
        let tail = Int.random(in: 30...90, using: &random) * 60
        fillActivityLimit(around: &steps, seed: seed)
        revokeAuthorization(in: &steps, seed: seed)
        drawPromiseActions(into: &steps, seed: seed, startSecond: startMinute * 60)
        return offeringHabits(Day(seed: seed, profile: profile, timeZone: place.zone, start: start, steps: steps, tail: tail))
    }

    /// The day's n-th habit (from 1) as it is drawn, before `offeringHabits` names it.
    static func habitPlaceholder(_ n: Int) -> String { "habit: Habit \(n)" }

    /// `day` with its habits named as the products' apps offer them: the n-th drawn is the n-th listed (round again
    /// past the last). When the apps offer none (`habits: []`) the habit steps go, their time passing before the next
    /// step, so every other step keeps its time and the draws stay those of every other product. When no app lists
    /// its habits, any name goes and the drawn names stay.
    func offeringHabits(_ day: Day) -> Day {
        guard let offered = surface.habits else { return day }
        var named = day
        var index = named.steps.count - 1
        while index >= 0 {
            if let n = (1...3).first(where: { named.steps[index].action == Self.habitPlaceholder($0) }) {
                if offered.isEmpty {
                    named = Shrinker.removing(index..<index + 1, from: named)
                } else {
                    named.steps[index].action = PersonAction.habit(offered[(n - 1) % offered.count]).scenarioStep
                }
            }
            index -= 1
        }
        return named
    }

    /// On one day in three with an unlock, the app's other activities fill DeviceActivity's limit of 20 just before
    /// the last habit or while the unlock runs, so that a re-check is refused. Drawn from a second stream, so that
    /// this kind of day changes no other step of any seed (seeds named in the docs and tests keep their days).
    static let fillStreamSalt: UInt64 = 0x20_AC71_7135
    func fillActivityLimit(around steps: inout [DayStep], seed: UInt64) {
        var random = SeededRandom(seed: seed ^ Self.fillStreamSalt)
        guard let lastHabit = steps.lastIndex(where: { $0.action == Self.habitPlaceholder(3) }), Int.random(in: 0..<3, using: &random) == 0 else { return }
        let index = Bool.random(using: &random) ? lastHabit : lastHabit + 1
        // The fill takes part of the next step's gap, so every other step keeps its time.
        let gap = index < steps.count ? Int.random(in: 0...steps[index].gap, using: &random) : Int.random(in: 0...600, using: &random)
        if index < steps.count { steps[index].gap -= gap }
        steps.insert(DayStep(gap: gap, action: "fillActivityLimit: true"), at: index)
    }

    /// The actions the products' promises name: on half the days one or two of the person's app actions ("skip tonight",
    /// "pause"), half of them in the hour before a window starts; and, for a pass with a cap, on one day in two a run of
    /// opens and presses of that button on a picked app up to one past the cap, each after the last pass ended, inside
    /// a window when the day reaches one. Drawn from their own stream, so a product whose promise names neither gets
    /// the same days as without them. Wall times are reckoned from the day's start by the steps' gaps (a clock or zone
    /// change the day plays may shift them: the days still vary).
    static let promiseStreamSalt: UInt64 = 0x9E0_415E_AC75
    func drawPromiseActions(into steps: inout [DayStep], seed: UInt64, startSecond: Int) {
        guard !surface.appActions.isEmpty || !surface.cappedButtons.isEmpty else { return }
        var random = SeededRandom(seed: seed ^ Self.promiseStreamSalt)
        /// The second of the local day each step would happen at, by index (`steps.count`: after the last).
        func secondsOfDay() -> [Int] {
            var elapsed = startSecond, seconds: [Int] = []
            for step in steps { elapsed += step.gap; seconds.append(elapsed % 86_400) }
            return seconds + [(elapsed + 60) % 86_400]
        }
        func inWindow(_ second: Int) -> Bool {
            surface.windows.contains { $0.start < $0.end ? ($0.start..<$0.end).contains(second) : second >= $0.start || second < $0.end }
        }
        func beforeAWindow(_ second: Int) -> Bool {
            surface.windows.contains { (1...3600).contains(($0.start - second + 86_400) % 86_400) }
        }
        func index(where wanted: (Int) -> Bool) -> Int {
            let candidates = secondsOfDay().enumerated().filter { wanted($0.element) }.map(\.offset)
            return candidates.randomElement(using: &random) ?? Int.random(in: 0...steps.count, using: &random)
        }
        func insert(_ inserted: [DayStep], at index: Int) {
            // The first takes part of the gap before the step it goes in front of, so every other step keeps its time.
            var block = inserted
            let gap = index < steps.count ? Int.random(in: 0...steps[index].gap, using: &random) : Int.random(in: 0...3600, using: &random)
            if index < steps.count { steps[index].gap -= gap }
            block[0].gap = gap
            steps.insert(contentsOf: block, at: index)
        }
        if !surface.appActions.isEmpty {
            for _ in 0..<[0, 0, 0, 0, 0, 1, 1, 1, 2, 2].randomElement(using: &random)! {
                let (app, action) = surface.appActions.randomElement(using: &random)!
                let yaml = app.map { "appAction: {app: \"\($0)\", action: \(action)}" } ?? "appAction: \(action)"
                let at = Bool.random(using: &random) ? index(where: beforeAWindow) : Int.random(in: 0...steps.count, using: &random)
                insert([DayStep(gap: 0, action: yaml)], at: at)
            }
        }
        if let capped = surface.cappedButtons.randomElement(using: &random), Bool.random(using: &random), let app = surface.selectedApps.randomElement(using: &random) {
            var run: [DayStep] = []
            for _ in 0...capped.cap {
                // Each open after the last pass ended: a shield to press on again.
                let passEnd = capped.minutes * 60 + 60
                run.append(DayStep(gap: Int.random(in: passEnd...(passEnd + 600), using: &random), action: "open: \(app)", app: app))
                run.append(DayStep(gap: Int.random(in: 2...30, using: &random), action: "press: \(capped.button)"))
            }
            insert(run, at: index(where: inWindow))
        }
    }

    /// On one day in eight the person revokes the app's FamilyControls authorization in Settings (the OS clears its
    /// shields and stops its schedules) and allows it again a few steps later: the product must set itself up anew.
    /// Drawn from its own stream, like the activity limit's fill, so it changes no other draw of any seed.
    static let revocationStreamSalt: UInt64 = 0x4E70_CA7E_D5EE
    func revokeAuthorization(in steps: inout [DayStep], seed: UInt64) {
        var random = SeededRandom(seed: seed ^ Self.revocationStreamSalt)
        guard !steps.isEmpty, Int.random(in: 0..<8, using: &random) == 0 else { return }
        let revoked = Int.random(in: 0..<steps.count, using: &random)
        let approved = Int.random(in: revoked...min(steps.count, revoked + 6), using: &random)
        // Each takes part of the gap before the step it goes in front of, so every other step keeps its time.
        for (index, action) in [(approved, "authorize: approved"), (revoked, "authorize: revoked")] {
            let gap = index < steps.count ? Int.random(in: 0...steps[index].gap, using: &random) : Int.random(in: 0...3600, using: &random)
            if index < steps.count { steps[index].gap -= gap }
            steps.insert(DayStep(gap: gap, action: action), at: index)
        }
    }
}
