import BusProtocol
import Configuration
import DeviceAPI
import Foundation

/// What a product promises: which targets are selected, and when each must be locked — derived from the
/// configuration and from what the person and the OS did (never from what the plugins claim).
public struct LockPolicy {
    public enum Product: String { case habitLock = "habit-lock", focusWindow = "focus-window", speedBump = "speed-bump" }

    public var product: Product
    public var habitsPerDay = 3
    public var unlockMinutes = 30
    public var passMinutes = 5
    public var focusHours: [(start: DateComponents, end: DateComponents)] = []
    public var selectedApps: Set<String> = []
    public var selectedCategories: Set<String> = []
    public var selectedDomains: Set<String> = []
    public var timeZone: TimeZone
    /// How long after a lock begins something may still be used (the invariant's minute).
    public var grace: TimeInterval = 60

    /// The policy of the reference product a configuration runs (its plugins' `product` option); nil when the
    /// configuration runs no reference product.
    public init?(configuration: ShieldBusConfiguration, catalog: AppCatalog, timeZone: TimeZone) {
        guard let options = configuration.plugins.map(\.options).first(where: { $0["product"] != nil }),
              let product = options["product"]?.stringValue.flatMap(Product.init(rawValue:)) else { return nil }
        self.product = product
        self.timeZone = timeZone
        if let value = options["habitsPerDay"]?.intValue { habitsPerDay = Int(value) }
        if let value = options["unlockMinutes"]?.intValue { unlockMinutes = Int(value) }
        if let value = options["passMinutes"]?.intValue { passMinutes = Int(value) }
        for hours in options["focusHours"]?.arrayValue ?? [] {
            guard let start = hours["start"]?.stringValue, let end = hours["end"]?.stringValue else { continue }
            focusHours.append((Self.components(start), Self.components(end)))
        }
        selectedApps = Set(configuration.device.selectionApps.compactMap { catalog.app(named: $0)?.name })
        selectedCategories = Set(configuration.device.selectionCategories.compactMap { catalog.category(id: $0)?.name })
        selectedDomains = Set(configuration.device.selectionDomains)
    }

    static func components(_ text: String) -> DateComponents {
        let time = LocalDateTime.timeOfDay(text) ?? (0, 0, 0)
        return DateComponents(hour: time.hour, minute: time.minute, second: time.second)
    }

    /// Whether a target (an app with its category, or a domain) is part of the selection.
    func isSelected(_ target: Target) -> Bool {
        switch target {
        case let .app(name, category): return selectedApps.contains(name) || category.map(selectedCategories.contains) == true
        case let .domain(host): return selectedDomains.contains { host == $0 || host.hasSuffix("." + $0) }
        }
    }

    /// When a selected target must be locked, within `range`, given the journal's facts.
    func lockedPeriods(for target: Target, facts: JournalFacts, range: DateInterval) -> Periods {
        switch product {
        case .habitLock:
            return Periods([range]).subtracting(Periods(facts.unlockWindows(habitsPerDay: habitsPerDay, minutes: unlockMinutes, timeZone: timeZone)))
        case .focusWindow:
            let focus = Periods(days(in: range).flatMap { day in focusHours.compactMap { hours -> DateInterval? in
                guard let start = at(hours.start, on: day), let end = at(hours.end, on: day), end > start else { return nil }
                return DateInterval(start: start, end: end)
            } })
            let passes = Periods(facts.passes(for: target.name).map { DateInterval(start: $0, duration: Double(passMinutes) * 60) })
            return focus.subtracting(passes)
        case .speedBump:
            var locked = Periods()
            let thresholds = facts.thresholdsReached
            for (index, reached) in thresholds.enumerated() {
                let until = index + 1 < thresholds.count ? thresholds[index + 1] : range.end
                guard until > reached else { continue }
                var period = Periods([DateInterval(start: reached, end: until)])
                if let nudge = facts.nudges(for: target.name).first(where: { $0 >= reached && $0 < until }) {
                    period = period.subtracting(Periods([DateInterval(start: nudge, end: until)]))
                }
                for interval in period.intervals { locked.insert(interval) }
            }
            return locked
        }
    }

    private func days(in range: DateInterval) -> [Date] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        var day = calendar.startOfDay(for: range.start)
        var result: [Date] = []
        while day < range.end {
            result.append(day)
            day = calendar.date(byAdding: .day, value: 1, to: day)!
        }
        return result
    }

    private func at(_ components: DateComponents, on day: Date) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.date(bySettingHour: components.hour ?? 0, minute: components.minute ?? 0, second: 0, of: day)
    }
}

/// Something that can be locked: an app (with its category's name) or a web domain.
enum Target: Hashable {
    case app(String, category: String?)
    case domain(String)

    var name: String {
        switch self {
        case .app(let name, _): return name
        case .domain(let host): return host
        }
    }
}
