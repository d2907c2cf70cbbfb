import BusProtocol
import BusTools
import Foundation

/// Turns events into what the page shows for them: the envelope, the line `shieldbus tap` prints, the line the
/// run's timeline prints (if it is a story event), and the monitored schedules whenever they change.
struct EventNarrator {
    private var formatter: EventFormatter
    private var schedules: ScheduleBoard

    init(timeZone: TimeZone) {
        formatter = EventFormatter(settings: ["timeZone": .string(timeZone.identifier)])
        schedules = ScheduleBoard(timeZone: timeZone)
    }

    /// Follows one event without telling it (what the page form of later events depends on: the schedules).
    mutating func advance(_ envelope: Envelope) {
        _ = schedules.apply(envelope)
    }

    /// The page form of one event, as JSON text; `stored`: the value a `state.changed` announced, read from its store;
    /// `schedules`: whether to follow the schedules (a line of the bus or the timeline alone needs none); `index`: its
    /// place in a recorded journal.
    mutating func narrate(_ envelope: Envelope, stored: JSONValue? = nil, schedules followed: Bool = true, index: Int? = nil) -> String {
        let (day, time) = formatter.dayAndTime(envelope.time)
        var event: [String: JSONValue] = [
            "seq": .int(Int64(envelope.seq)), "time": .int(envelope.time), "topic": .string(envelope.topic),
            "source": .string(envelope.source), "body": envelope.bodyValue, "day": .string(day), "clock": .string(time),
            "tap": .string(formatter.lines(for: envelope).last ?? ""),
        ]
        if let corr = envelope.corr { event["corr"] = .string(corr) }
        if let stored { event["stored"] = stored }
        if let index { event["index"] = .int(Int64(index)) }
        if let deadline = envelope.deadline { event["deadline"] = .int(deadline) }
        if let story = Timeline.describe(envelope) { event["story"] = ["kind": .string(story.kind), "text": .string(story.text)] }
        if followed, schedules.apply(envelope) || envelope.topic.hasPrefix("deviceactivity.interval-") || envelope.topic == "bus.ready" {
            event["schedules"] = schedules.snapshot(at: envelope.time)
        }
        return JSONValue.object(event).jsonText
    }
}
