// LockInvariant: judges a run's journal against the lock invariant of every product in its configuration —
// from what the person and the OS did, never from what the plugins claim.

import BusProtocol
import Configuration
import Foundation
import ScreenTime

/// A breach of the lock invariant, in words a person can act on.
public struct LockViolation: Equatable, CustomStringConvertible, Sendable {
    public enum Kind: String, Equatable, Sendable {
        /// Something selected was usable while it had to be locked, past the grace minute.
        case usableWhileLocked = "usable-while-locked"
        /// Something was under the product's shield while it had to be usable, past the grace minute.
        case shieldedWhileAllowed = "shielded-while-allowed"
    }

    public var kind: Kind
    /// The product whose invariant was broken.
    public var product: String
    /// The app or web domain.
    public var target: String
    /// In the wrong state from (no earlier than the state it had to be in began) …
    public var from: Date
    /// … to.
    public var to: Date
    /// When the state it had to be in began: the lock (the end of an unlock, a pass, a cooldown), or the
    /// permission (the end of a lock); nil when the target is not selected at all.
    public var since: Date?
    /// The plugin whose store write last changed whether this target is shielded, before the violation
    /// (`system` for the OS itself); nil when no write did.
    public var decidedBy: String?
    /// The zone in force at `from`, for printing local times.
    public var timeZone: TimeZone

    /// How long past the end of the permitted state the wrong state lasted.
    public var pastEnd: TimeInterval { to.timeIntervalSince(since ?? from) }

    public var description: String {
        let span = "from \(Self.clock(from, timeZone)) to \(Self.clock(to, timeZone))"
        let decided = " (last decided by \(decidedBy ?? "no plugin"))"
        switch kind {
        case .usableWhileLocked:
            return "\(product): \(target) was usable \(span), \(Self.duration(pastEnd)) past the end of its permission at \(Self.clock(since ?? from, timeZone))\(decided)"
        case .shieldedWhileAllowed:
            guard let since else { return "\(product): \(target) was shielded \(span) although the product never selected it\(decided)" }
            return "\(product): \(target) was shielded \(span), \(Self.duration(pastEnd)) past the end of its lock at \(Self.clock(since, timeZone))\(decided)"
        }
    }

    /// A local date and time with the zone's abbreviation, so a repeated DST hour reads unambiguously.
    static func clock(_ date: Date, _ timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let zone = timeZone.abbreviation(for: date) ?? timeZone.identifier
        return String(format: "%04d-%02d-%02d %02d:%02d:%02d ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0, c.second ?? 0) + zone
    }

    static func duration(_ seconds: TimeInterval) -> String {
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole) s" }
        return whole % 60 == 0 ? "\(whole / 60) min" : "\(whole / 60) min \(whole % 60) s"
    }
}

/// One product's verdict over a journal.
public struct ProductVerdict: Equatable, Sendable {
    public var product: String
    public var violations: [LockViolation]
    /// The product's promise model failed (it could not be run, or answered nonsense): no verdict could be reached.
    public var modelFailure: String?
    /// What the journal exercised of the promise.
    public var coverage = Coverage()

    public init(product: String, violations: [LockViolation], modelFailure: String? = nil, coverage: Coverage = Coverage()) {
        self.product = product
        self.violations = violations
        self.modelFailure = modelFailure
        self.coverage = coverage
    }

    public var isHeld: Bool { violations.isEmpty && modelFailure == nil }
}

/// Judges journals against the lock invariant of every product of a configuration. The one entry point:
/// `LockInvariantChecker(configuration:catalog:).verdicts(for: journal)`.
public struct LockInvariantChecker {
    public let products: [ProductRules]
    /// The device's zone when the journal begins (`device.time-zone-changed` events change it from then on).
    public let timeZone: TimeZone

    public init(products: [ProductRules], timeZone: TimeZone) {
        self.products = products
        self.timeZone = timeZone
    }

    /// The checker of every product of a configuration that declares a promise; `timeZone` overrides the
    /// configuration's (a scenario may name its own); `models` resolves the promises' escape hatches. Throws a
    /// `ConfigurationError` for a model it cannot find.
    public init(configuration: ShieldBusConfiguration, catalog: AppCatalog, timeZone: TimeZone? = nil, models: PromiseModels = .none) throws {
        products = try ProductRules.all(in: configuration, catalog: catalog, models: models)
        self.timeZone = timeZone ?? TimeZone(identifier: configuration.timeZone) ?? TimeZone(identifier: "UTC")!
    }

    /// Each product's verdict, in configuration order.
    public func verdicts(for journal: [Envelope]) -> [ProductVerdict] {
        var reading = reading()
        for envelope in journal { reading.read(envelope) }
        return reading.verdicts()
    }

    /// Each product's verdict and what the device went through, from one reading of the journal.
    public func verdictsAndDeviceCoverage(for journal: [Envelope]) -> (verdicts: [ProductVerdict], device: Coverage) {
        var reading = reading()
        for envelope in journal { reading.read(envelope) }
        return (reading.verdicts(), reading.deviceCoverage())
    }

    /// A check fed one envelope at a time, as a run journals them: it keeps the facts, not the journal (only the
    /// OS's events, when a promise model needs them).
    public func reading() -> Reading {
        Reading(checker: self, facts: JournalFacts.Builder(timeZone: timeZone), keepsEvents: products.contains { $0.model != nil })
    }

    /// A journal being read for a check (`LockInvariantChecker.reading()`).
    public struct Reading {
        let checker: LockInvariantChecker
        var facts: JournalFacts.Builder
        let keepsEvents: Bool
        var osEvents: [Envelope] = []

        init(checker: LockInvariantChecker, facts: JournalFacts.Builder, keepsEvents: Bool) {
            self.checker = checker
            self.facts = facts
            self.keepsEvents = keepsEvents
        }

        public mutating func read(_ envelope: Envelope) {
            facts.read(envelope)
            if keepsEvents && envelope.source == JournalFacts.osSource { osEvents.append(envelope) }
        }

        /// Each product's verdict on the journal read so far, in configuration order.
        public func verdicts() -> [ProductVerdict] {
            let facts = facts.facts()
            return checker.products.map { rules in
                var modelLocks: [String: Periods]?
                if let model = rules.model {
                    do {
                        modelLocks = try model.lockedPeriods(journal: osEvents, product: rules.name, timeZone: checker.timeZone).mapValues { Periods($0) }
                    } catch {
                        return ProductVerdict(product: rules.name, violations: [], modelFailure: "\(error)")
                    }
                }
                return ProductVerdict(product: rules.name, violations: ProductJudge(rules: rules, facts: facts, modelLocks: modelLocks).violations(),
                                      coverage: rules.coverage(facts))
            }
        }

        /// What the device went through in the journal read so far (clock, zones, DST, crashes, updates, revocations).
        public func deviceCoverage() -> Coverage {
            facts.facts().deviceCoverage()
        }
    }
}

/// One product's judgement over one journal's facts.
struct ProductJudge {
    let rules: ProductRules
    let facts: JournalFacts
    /// A promise model's answer, when the product has one.
    var modelLocks: [String: Periods]? = nil

    func violations() -> [LockViolation] {
        // Without FamilyControls authorization an app can shield nothing (the OS refuses its writes, and a revocation
        // clears its stores): no lock holds then, and one that begins at the approval gets the usual minute.
        let unauthorized = facts.unauthorized(plugins: rules.plugins)
        var locksCache: [Target: (locks: Locks, allowed: Periods)] = [:]
        func locksAndAllowed(_ target: Target) -> (locks: Locks, allowed: Periods) {
            if let cached = locksCache[target] { return cached }
            var locks = rules.locks(for: target, facts: facts, model: modelLocks)
            if !unauthorized.intervals.isEmpty { locks.periods = locks.periods.subtracting(unauthorized) }
            locksCache[target] = (locks, locks.periods.complement(in: facts.range).subtracting(locks.mayBeShielded))
            return locksCache[target]!
        }
        var found: [LockViolation] = []
        for span in facts.usable where rules.isSelected(span.target) {
            let locks = locksAndAllowed(span.target).locks
            for lock in locks.periods.overlapping(from: span.from, to: span.to) {
                let grace = locks.graces[lock.start] ?? rules.grace
                let illegalFrom = max(span.from, lock.start.addingTimeInterval(grace)), illegalTo = min(span.to, lock.end)
                guard illegalTo > illegalFrom else { continue }
                found.append(violation(.usableWhileLocked, span.target, from: max(span.from, lock.start), to: illegalTo, since: lock.start, decidedAt: illegalFrom))
            }
        }
        for span in facts.shielded where rules.owns(shieldFrom: span.stores) {
            guard rules.isSelected(span.target) else {
                found.append(violation(.shieldedWhileAllowed, span.target, from: span.from, to: span.to, since: nil, decidedAt: span.from))
                continue
            }
            // A shield can be an instant (drawn and dismissed at once): its end counts.
            for allowed in locksAndAllowed(span.target).allowed.overlapping(from: span.from, to: span.to, orAt: true) {
                let illegalFrom = max(span.from, allowed.start.addingTimeInterval(rules.grace))
                guard illegalFrom < allowed.end, illegalFrom <= span.to else { continue }
                found.append(violation(.shieldedWhileAllowed, span.target, from: max(span.from, allowed.start), to: min(span.to, allowed.end),
                                       since: allowed.start, decidedAt: illegalFrom))
            }
        }
        return found.sorted { ($0.from, $0.target, $0.kind.rawValue) < ($1.from, $1.target, $1.kind.rawValue) }
    }

    private func violation(_ kind: LockViolation.Kind, _ target: Target, from: Date, to: Date, since: Date?, decidedAt: Date) -> LockViolation {
        LockViolation(kind: kind, product: rules.name, target: target.name, from: from, to: to, since: since,
                      decidedBy: lastDecider(for: target, until: decidedAt), timeZone: facts.zones.zone(at: from))
    }

    /// The writer of the last change to the product's stores, up to `date`, that changed whether `target` is
    /// shielded (judged in the tokens of the epoch each write was made in: the OS carries those over an update, a
    /// stale token shields nothing); when that cannot be told, the last writer to its stores.
    func lastDecider(for target: Target, until date: Date) -> String? {
        var stores: [String: JournalFacts.StoreChange] = [:]
        var shielded: Bool? = false
        var decider: String?
        var lastWriter: String?
        for change in facts.storeChanges where change.at <= date && rules.owns(shieldFrom: [change.store]) {
            stores[change.store] = change
            lastWriter = change.writer
            let answers = stores.values.map { shields($0, target) }
            let now: Bool? = answers.contains(true) ? true : answers.allSatisfy { $0 == false } ? false : nil
            if let now, now != shielded { decider = change.writer }
            shielded = now
        }
        return decider ?? lastWriter
    }

    /// Whether a store's settings shield the target, in the tokens of the write's epoch; nil if the journal never
    /// showed the target's token in that epoch.
    private func shields(_ change: JournalFacts.StoreChange, _ target: Target) -> Bool? {
        let matcher = ShieldMatcher(stores: [change.store: change.shield])
        let category = target.category.flatMap { facts.token(epoch: change.epoch, kind: "cat", name: $0) }.map(ActivityCategoryToken.init(rawValue:))
        switch target {
        case .app(let name, _):
            guard let token = facts.token(epoch: change.epoch, kind: "app", name: name) else { return nil }
            return matcher.match(application: ApplicationToken(rawValue: token), category: category) != nil
        case .domain(let host, _):
            guard let token = facts.token(epoch: change.epoch, kind: "web", name: host) else { return nil }
            return matcher.match(webDomain: WebDomainToken(rawValue: token), category: category) != nil
        }
    }
}
