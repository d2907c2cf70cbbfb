import BusProtocol
import DeviceAPI
import Foundation

/// What happened in a run, read from its journal: what the person did, what the OS did, and when each app
/// or page was usable.
struct JournalFacts {
    struct Span {
        var target: Target
        var from: Date
        var to: Date
    }

    struct ShieldEvent {
        var target: Target
        var at: Date
    }

    private(set) var habitCompletions: [(at: Date, habit: String)] = []
    private(set) var shieldActions: [(at: Date, action: String, target: String)] = []
    private(set) var thresholdsReached: [Date] = []
    private(set) var usableSpans: [Span] = []
    private(set) var shields: [ShieldEvent] = []
    private(set) var range: DateInterval

    init(journal: [Envelope]) {
        let first = journal.first.map { date(busTime: $0.time) } ?? Date(timeIntervalSince1970: 0)
        let last = journal.last.map { date(busTime: $0.time) } ?? first
        range = DateInterval(start: first, end: max(first, last))
        var open: [Target: Date] = [:]
        for envelope in journal {
            let at = date(busTime: envelope.time)
            let body = envelope.bodyValue
            switch envelope.topic {
            case DeviceTopic.habitCompleted:
                habitCompletions.append((at, body["habit"]?.stringValue ?? ""))
            case DeviceTopic.actionHandled:
                shieldActions.append((at, body["action"]?.stringValue ?? "", body["target"]?.stringValue ?? ""))
            case DeviceTopic.eventDidReachThreshold:
                thresholdsReached.append(at)
            case DeviceTopic.appOpened:
                open[Self.appTarget(body)] = at
            case DeviceTopic.webVisited:
                if let host = body["webDomain"]?["domain"]?.stringValue { open[.domain(host)] = at }
            case DeviceTopic.appClosed:
                let target = Self.appTarget(body)
                if let from = open.removeValue(forKey: target) { usableSpans.append(Span(target: target, from: from, to: at)) }
            case DeviceTopic.webLeft:
                if let host = body["webDomain"]?["domain"]?.stringValue, let from = open.removeValue(forKey: .domain(host)) {
                    usableSpans.append(Span(target: .domain(host), from: from, to: at))
                }
            case DeviceTopic.shieldShown:
                let target = body["target"]
                if let app = target?["application"]?["localizedDisplayName"]?.stringValue {
                    shields.append(ShieldEvent(target: .app(app, category: target?["category"]?["localizedDisplayName"]?.stringValue), at: at))
                } else if let host = target?["webDomain"]?["domain"]?.stringValue {
                    shields.append(ShieldEvent(target: .domain(host), at: at))
                }
            default:
                break
            }
        }
        for (target, from) in open { usableSpans.append(Span(target: target, from: from, to: range.end)) }
        usableSpans.sort { ($0.from, $0.target.name) < ($1.from, $1.target.name) }
    }

    private static func appTarget(_ body: JSONValue) -> Target {
        .app(body["application"]?["localizedDisplayName"]?.stringValue ?? "?", category: body["category"]?["localizedDisplayName"]?.stringValue)
    }

    /// The habit lock's unlocks: from the moment the day's last required habit was done, for `minutes`.
    func unlockWindows(habitsPerDay: Int, minutes: Int, timeZone: TimeZone) -> [DateInterval] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        var doneByDay: [Date: Set<String>] = [:]
        var windows: [DateInterval] = []
        for completion in habitCompletions {
            let day = calendar.startOfDay(for: completion.at)
            var done = doneByDay[day] ?? []
            guard !done.contains(completion.habit) else { continue }
            done.insert(completion.habit)
            doneByDay[day] = done
            if done.count == habitsPerDay { windows.append(DateInterval(start: completion.at, duration: Double(minutes) * 60)) }
        }
        return windows
    }

    /// When grace passes began for a target: the person pressed "Open for N minutes" (the secondary button).
    /// The person's press is the fact; whether the plugins honoured it is what is being checked.
    func passes(for target: String) -> [Date] {
        shieldActions.filter { $0.target == target && $0.action == "secondaryButtonPressed" }.map(\.at)
    }

    /// When a speed bump was dismissed for a target: the person pressed "Dismiss" (the primary button).
    func nudges(for target: String) -> [Date] {
        shieldActions.filter { $0.target == target && $0.action == "primaryButtonPressed" }.map(\.at)
    }
}

/// Checks journals against the lock invariant.
public struct LockInvariantChecker {
    public let policy: LockPolicy

    public init(policy: LockPolicy) {
        self.policy = policy
    }

    /// Every breach in the journal, in time order.
    public func violations(in journal: [Envelope]) -> [LockViolation] {
        let facts = JournalFacts(journal: journal)
        var lockedCache: [Target: Periods] = [:]
        func locked(_ target: Target) -> Periods {
            if let cached = lockedCache[target] { return cached }
            let periods = policy.lockedPeriods(for: target, facts: facts, range: facts.range)
            lockedCache[target] = periods
            return periods
        }
        var found: [LockViolation] = []
        for span in facts.usableSpans where policy.isSelected(span.target) {
            for lock in locked(span.target).intervals where lock.end > span.from && lock.start < span.to {
                let illegalFrom = max(span.from, lock.start.addingTimeInterval(policy.grace))
                let illegalTo = min(span.to, lock.end)
                guard illegalTo > illegalFrom else { continue }
                found.append(LockViolation(kind: .usableWhileLocked, target: span.target.name, from: max(span.from, lock.start),
                                           to: illegalTo, since: lock.start, timeZone: policy.timeZone))
            }
        }
        for shield in facts.shields {
            guard policy.isSelected(shield.target) else {
                found.append(LockViolation(kind: .shieldedWhileAllowed, target: shield.target.name, from: shield.at, to: shield.at,
                                           since: facts.range.start, timeZone: policy.timeZone))
                continue
            }
            let periods = locked(shield.target)
            guard periods.containing(shield.at) == nil else { continue }
            let allowedSince = periods.intervals.last { $0.end <= shield.at }?.end ?? facts.range.start
            if shield.at.timeIntervalSince(allowedSince) > policy.grace {
                found.append(LockViolation(kind: .shieldedWhileAllowed, target: shield.target.name, from: shield.at, to: shield.at,
                                           since: allowedSince, timeZone: policy.timeZone))
            }
        }
        return found.sorted { ($0.from, $0.target) < ($1.from, $1.target) }
    }
}
