import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

/// The DeviceActivity schedules being monitored, followed from the bus (a start-monitoring request the OS
/// accepted adds one, a stop removes it, a look at the phone tells them all), with their coming interval starts and ends.
struct ScheduleBoard {
    private struct Registration {
        let schedule: DeviceActivitySchedule
        let since: Date
    }

    private let calendar: ScheduleCalendar
    private var registrations: [String: Registration] = [:]
    /// Requests waiting for the OS's answer, by correlation id.
    private var pendingStarts = PendingRequests<StartMonitoring>()
    private var pendingStops = PendingRequests<StopMonitoring>()

    init(timeZone: TimeZone) {
        calendar = ScheduleCalendar(timeZone: timeZone)
    }

    /// Follows one event; true when the set of schedules changed.
    mutating func apply(_ envelope: Envelope) -> Bool {
        if envelope.topic == "bus.started" {
            // A broker (re)started: the last one's open requests are never answered (it kept none of them).
            pendingStarts.removeAll()
            pendingStops.removeAll()
            return false
        }
        guard let corr = envelope.corr else { return false }
        switch envelope.topic {
        case DeviceTopic.startMonitoringRequest:
            pendingStarts.add(corr, try? DeviceAPICoding.decode(StartMonitoring.self, from: envelope.body))
        case DeviceTopic.stopMonitoringRequest:
            pendingStops.add(corr, try? DeviceAPICoding.decode(StopMonitoring.self, from: envelope.body))
        case DeviceTopic.startMonitoringReply:
            guard let start = pendingStarts.take(corr), envelope.bodyValue["ok"]?.boolValue == true else { return false }
            registrations[start.activity.rawValue] = Registration(schedule: start.schedule, since: DeviceAPI.date(busTime: envelope.time))
            return true
        case DeviceTopic.lookReply:
            // Someone (the Studio itself, at connect) looked at the phone: the OS's schedules as they are now.
            guard envelope.source == "broker", let look = try? DeviceAPICoding.decode(DeviceReply<DeviceLook>.self, from: envelope.body).value else { return false }
            registrations = Dictionary(uniqueKeysWithValues: look.activities.map {
                ($0.activity.rawValue, Registration(schedule: $0.schedule, since: $0.registeredAt))
            })
            return true
        case DeviceTopic.stopMonitoringReply:
            guard let stop = pendingStops.take(corr), envelope.bodyValue["ok"]?.boolValue == true else { return false }
            for activity in stop.activities { registrations[activity.rawValue] = nil }
            return true
        default:
            break
        }
        return false
    }

    /// How many requests wait for the OS's answer.
    var pendingCount: Int { pendingStarts.count + pendingStops.count }

    /// Every schedule with its coming intervals (ms since the epoch), from `time` on: a page picks the first
    /// boundary after the instant it shows.
    func snapshot(at time: BusTime) -> JSONValue {
        let now = DeviceAPI.date(busTime: time)
        return .array(registrations.keys.sorted().map { name in
            let registration = registrations[name]!
            let from = registration.schedule.repeats ? now : registration.since
            let intervals = calendar.intervals(for: registration.schedule, from: from).prefix(8).map { interval -> JSONValue in
                ["start": .int(DeviceAPI.busTime(interval.start)), "end": .int(DeviceAPI.busTime(interval.end))]
            }
            return [
                "activity": .string(name), "repeats": .bool(registration.schedule.repeats),
                "start": .string(Self.clock(registration.schedule.intervalStart)), "end": .string(Self.clock(registration.schedule.intervalEnd)),
                "intervals": .array(intervals),
            ]
        })
    }

    /// "07:00" for `{hour: 7, minute: 0}`; the date parts too when the components name a date.
    private static func clock(_ components: DateComponents) -> String {
        var text = String(format: "%02d:%02d", components.hour ?? 0, components.minute ?? 0)
        if let second = components.second, second != 0 { text += String(format: ":%02d", second) }
        if let day = components.day { text = String(format: "%02d-%02d ", components.month ?? 0, day) + text }
        if let weekday = components.weekday { text = "weekday \(weekday) " + text }
        return text
    }
}

/// Requests waiting for the OS's answer, by correlation id, the oldest forgotten first past `limit`: the OS answers
/// its requests at once, so one still unanswered after that many newer ones never will be (its broker was killed
/// between the two, or the journal was cut), and a long journal must not keep them all.
struct PendingRequests<Request> {
    static var limit: Int { 64 }
    private var byCorr: [String: Request] = [:]
    /// The correlation ids in the order asked, oldest first.
    private var order: [String] = []

    var count: Int { byCorr.count }

    /// Waits for `request`'s answer (an undecodable request waits for nothing).
    mutating func add(_ corr: String, _ request: Request?) {
        if byCorr.removeValue(forKey: corr) != nil { order.removeAll { $0 == corr } }
        guard let request else { return }
        byCorr[corr] = request
        order.append(corr)
        if order.count > Self.limit { byCorr[order.removeFirst()] = nil }
    }

    /// The request `corr` answers, no longer waiting.
    mutating func take(_ corr: String) -> Request? {
        guard let request = byCorr.removeValue(forKey: corr) else { return nil }
        order.removeAll { $0 == corr }
        return request
    }

    mutating func removeAll() {
        byCorr.removeAll()
        order.removeAll()
    }
}
