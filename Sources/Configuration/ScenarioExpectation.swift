// ScenarioExpectation: what a scenario's `expect:` list says must be true after its run, each entry with its line.

import BusProtocol
import Foundation

/// One entry of a scenario's `expect:` list, checked against the run once it has ended.
///
/// ```yaml
/// expect:
///   - {at: "10:30", shielded: Instagram}          # in front of the person and covered by a shield
///   - {at: "12:20", usable: instagram.com}        # in use (an app, or a web domain's page)
///   - {key: isCurrentlyUnlocked, value: false}    # an App-Group key's value at the end (appGroup: optional)
///   - {notification: circle-nudge}                # a notification whose id starts with this was posted
/// ```
public struct ScenarioExpectation: Equatable, Sendable {
    public enum Claim: Equatable, Sendable {
        /// At the instant, the app (by name) or web domain was in front of the person under a shield.
        case shielded(target: String, at: Date)
        /// At the instant, the app or web domain was in use (no shield).
        case usable(target: String, at: Date)
        /// When the run ended, the key held this value (JSON) in the group (nil: the configuration's only group).
        case appGroupValue(group: String?, key: String, valueJSON: String)
        /// A notification whose id is this, or starts with it and a dash, was posted (by `before`, if given).
        case notificationPosted(id: String, before: Date?)
    }

    /// The line of the entry in its file, for the failure's message.
    public let line: Int
    public let claim: Claim

    public init(line: Int, claim: Claim) {
        self.line = line
        self.claim = claim
    }

    static let keys = ["at", "shielded", "usable", "appGroup", "key", "value", "notification"]

    /// Reads one entry; `instant` resolves an `at:` the way step times are.
    static func parse(_ entry: YAMLValue, instant: (YAMLValue) throws -> Date) throws -> ScenarioExpectation {
        let fields = try entry.uniqueMapping(allowed: keys)
        let time = try fields["at"].map(instant)
        let claim: Claim
        if let value = fields["shielded"] ?? fields["usable"] {
            guard let time else { throw entry.error("'\(fields["shielded"] != nil ? "shielded" : "usable")' needs 'at': the time it is checked") }
            guard fields["shielded"] == nil || fields["usable"] == nil else { throw entry.error("an entry is either 'shielded' or 'usable', not both") }
            let target = try value.string()
            claim = fields["shielded"] != nil ? .shielded(target: target, at: time) : .usable(target: target, at: time)
        } else if let key = fields["key"] {
            guard let value = fields["value"] else { throw entry.error("an App-Group expectation needs 'value': what the key holds at the end") }
            guard time == nil else { throw fields["at"]!.error("an App-Group key is checked at the end of the run; leave out 'at'") }
            claim = .appGroupValue(group: try fields["appGroup"]?.string(), key: try key.string(), valueJSON: try value.jsonValue().jsonText)
        } else if let id = fields["notification"] {
            claim = .notificationPosted(id: try id.string(), before: time)
        } else {
            throw entry.error("an expectation needs one of: shielded, usable (with at), key and value, notification")
        }
        return ScenarioExpectation(line: entry.line, claim: claim)
    }
}
