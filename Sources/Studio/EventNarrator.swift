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

    /// The page form of one event, as JSON text; `stored`: the value a `state.changed` announced, read from its store.
    mutating func narrate(_ envelope: Envelope, stored: JSONValue? = nil) -> String {
        let (day, time) = formatter.dayAndTime(envelope.time)
        var event: [String: JSONValue] = [
            "seq": .int(Int64(envelope.seq)), "time": .int(envelope.time), "topic": .string(envelope.topic),
            "source": .string(envelope.source), "body": envelope.bodyValue, "day": .string(day), "clock": .string(time),
            "tap": .string(formatter.lines(for: envelope).last ?? ""),
        ]
        if let corr = envelope.corr { event["corr"] = .string(corr) }
        if let stored { event["stored"] = stored }
        if let deadline = envelope.deadline { event["deadline"] = .int(deadline) }
        if let story = Timeline.describe(envelope) { event["story"] = ["kind": .string(story.kind), "text": .string(story.text)] }
        if schedules.apply(envelope) || envelope.topic.hasPrefix("deviceactivity.interval-") || envelope.topic == "bus.ready" {
            event["schedules"] = schedules.snapshot(at: envelope.time)
        }
        return JSONValue.object(event).jsonText
    }
}
