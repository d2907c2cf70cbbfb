import BusProtocol
import Configuration
import Foundation
import DeviceAPI

/// The person's actions in a journal as a scenario file that `shieldbus run --scenario` replays (the Studio's "save as
/// scenario"): each input request the device accepted (`input.<verb>.request` whose reply is ok) or was still
/// handling at the journal's last event read (what it did so far is in the state there), in order, timed by `after:`
/// from the journal's first event — elapsed bus time, so a jump of the bus clock is kept as the wait it made.
public struct SavedScenario {
    /// An accepted action: in which order it was asked, when, and its step as the file writes it.
    private var steps: [(order: Int, time: BusTime, action: String)] = []
    /// Requests waiting for their reply, by correlation id.
    private var asked: [String: (order: Int, time: BusTime, action: String)] = [:]
    private var requests = 0
    private var first: BusTime?
    private var last: BusTime?

    public init() {}

    /// Reads the journal's next event.
    public mutating func read(_ envelope: Envelope) {
        first = first ?? envelope.time
        last = envelope.time
        guard envelope.topic.hasPrefix("input."), let corr = envelope.corr else { return }
        if envelope.topic.hasSuffix(".request") {
            let verb = String(envelope.topic.dropFirst("input.".count).dropLast(".request".count))
            if let action = Self.step(verb: verb, body: envelope.bodyValue) {
                asked[corr] = (requests, envelope.time, action)
                requests += 1
            }
        } else if envelope.topic.hasSuffix(".reply"), let request = asked.removeValue(forKey: corr), envelope.bodyValue["ok"]?.boolValue == true {
            steps.append(request)
        }
    }

    /// The actions the file has: the accepted ones and those still being handled, in the order they were asked.
    private var actions: [(order: Int, time: BusTime, action: String)] { (steps + asked.values).sorted { $0.order < $1.order } }

    /// How many actions the file will have.
    public var count: Int { steps.count + asked.count }

    /// The scenario file: `name`, the journal's first instant as its start (local, in `timeZone`, to the second), the
    /// steps, and its end at the journal's last instant read (the cursor).
    public func text(name: String, timeZone: TimeZone, comment: String) -> String {
        guard let first else { return "" }
        let start = first - ((first % 1000) + 1000) % 1000  // a scenario starts on a whole second
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date(busTime: start))
        var lines = comment.split(separator: "\n").map { "# \($0)" }
        lines += ["name: \(name)",
                  String(format: "start: %04d-%02d-%02dT%02d:%02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!),
                  "timeZone: \(timeZone.identifier)"]
        // Each step at its own second from the start, so that rounding does not add up along the day.
        var at = 0
        let steps = actions
        let offsets = steps.map { Int(((Double($0.time - start)) / 1000).rounded()) }
        lines.append("end: after \(Scenario.durationText(max(0, Int((Double((last ?? start) - start) / 1000).rounded()) - (offsets.last ?? 0))))")
        lines.append(steps.isEmpty ? "steps: []" : "steps:")
        for (step, offset) in zip(steps, offsets) {
            lines.append("  - after: \(Scenario.durationText(offset - at))\n    \(step.action)")
            at = offset
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A request's action as a scenario step writes it; nil for a request that names no person's action.
    static func step(verb: String, body: JSONValue) -> String? {
        guard let verb = PersonVerb(rawValue: verb), let action = try? PersonAction(verb: verb, requestBody: body) else { return nil }
        return action.scenarioStep
    }
}
