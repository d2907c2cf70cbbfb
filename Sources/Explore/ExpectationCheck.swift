import BusProtocol
import Configuration
import DeviceAPI
import Foundation

/// A scenario expectation that did not hold, named by its line.
public struct ExpectationFailure: Equatable, CustomStringConvertible {
    public let line: Int
    public let problem: String

    public var description: String { "expectation at line \(line): \(problem)" }
}

/// Checks a scenario's `expect:` entries against its run: the journal for what was on screen and what was posted,
/// the App-Group stores (through `appGroupValue`) for values at the end.
public struct ExpectationCheck {
    public let timeZone: TimeZone
    /// The value of a key in a group (nil group: the configuration's only one) when the run ended; nil if absent.
    public let appGroupValue: (_ group: String?, _ key: String) throws -> JSONValue?

    public init(timeZone: TimeZone, appGroupValue: @escaping (_ group: String?, _ key: String) throws -> JSONValue?) {
        self.timeZone = timeZone
        self.appGroupValue = appGroupValue
    }

    /// What a target was, for the person, at an instant.
    enum ScreenState: String {
        case shielded, usable
        case notInFront = "not in front of the person"
    }

    /// The topics an expectation is judged on: a run keeps only these events for its check.
    static let topicsRead: Set<String> = [DeviceTopic.shieldShown, DeviceTopic.shieldDismissed, DeviceTopic.appOpened, DeviceTopic.webVisited,
                                          DeviceTopic.appClosed, DeviceTopic.webLeft, DeviceTopic.notificationPosted]

    /// Whether `failures(of:in:)` looks at this event.
    public static func reads(_ envelope: Envelope) -> Bool {
        topicsRead.contains(envelope.topic)
    }

    /// The expectations that do not hold; `journal` needs only the events `reads` keeps.
    public func failures(of expectations: [ScenarioExpectation], in journal: [Envelope]) -> [ExpectationFailure] {
        expectations.compactMap { expectation in
            problem(with: expectation.claim, journal).map { ExpectationFailure(line: expectation.line, problem: $0) }
        }
    }

    private func problem(with claim: ScenarioExpectation.Claim, _ journal: [Envelope]) -> String? {
        switch claim {
        case let .shielded(target, at), let .usable(target, at):
            let wanted: ScreenState = if case .shielded = claim { .shielded } else { .usable }
            let found = Self.state(of: target, at: at, in: journal)
            guard found != wanted else { return nil }
            return "\(target) should be \(wanted.rawValue) at \(LocalDateTime.describe(at, in: timeZone)) but was \(found.rawValue)"
        case let .appGroupValue(group, key, valueJSON):
            do {
                let value = try appGroupValue(group, key)
                guard value?.jsonText != valueJSON else { return nil }
                return "App-Group key \(key) should hold \(valueJSON) at the end but holds \(value?.jsonText ?? "nothing")"
            } catch {
                return "App-Group key \(key) could not be read: \(error)"
            }
        case let .notificationPosted(id, before):
            let posted = journal.filter { $0.topic == DeviceTopic.notificationPosted }
            let matching = posted.filter { envelope in
                guard let postedID = envelope.bodyValue["id"]?.stringValue else { return false }
                return (postedID == id || postedID.hasPrefix(id + "-")) && before.map { date(busTime: envelope.time) <= $0 } ?? true
            }
            guard matching.isEmpty else { return nil }
            let by = before.map { " by \(LocalDateTime.describe($0, in: timeZone))" } ?? ""
            let ids = posted.compactMap { $0.bodyValue["id"]?.stringValue }
            return "no notification '\(id)' was posted\(by) (posted: \(ids.isEmpty ? "none" : ids.joined(separator: ", ")))"
        }
    }

    /// The last thing the journal says about the target up to and including `instant`.
    static func state(of target: String, at instant: Date, in journal: [Envelope]) -> ScreenState {
        var state = ScreenState.notInFront
        for envelope in journal where date(busTime: envelope.time) <= instant {
            let body = envelope.bodyValue
            switch envelope.topic {
            case DeviceTopic.shieldShown where names(body["target"], target): state = .shielded
            case DeviceTopic.shieldDismissed where names(body["target"], target): state = .notInFront
            case DeviceTopic.appOpened, DeviceTopic.webVisited: if names(body, target) { state = .usable }
            case DeviceTopic.appClosed, DeviceTopic.webLeft: if names(body, target) { state = .notInFront }
            default: break
            }
        }
        return state
    }

    /// Whether an event's target is the app named `target`, or a page of the domain `target` (or a subdomain).
    /// `shield.dismissed` names its target by its display name or host alone.
    private static func names(_ subject: JSONValue?, _ target: String) -> Bool {
        if let name = subject?.stringValue { return name == target || name.hasSuffix("." + target) }
        if subject?["application"]?["localizedDisplayName"]?.stringValue == target { return true }
        guard let host = subject?["webDomain"]?["domain"]?.stringValue else { return false }
        return host == target || host.hasSuffix("." + target)
    }
}
