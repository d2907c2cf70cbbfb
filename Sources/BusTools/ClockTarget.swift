import Configuration
import DeviceAPI
import Foundation

/// Where a jump of the bus clock goes, as a person writes it: `+30m`, `+2h`, `+1h30m` (forward from now), `07:00`
/// (the next time the device's clock shows it, in its time zone) or `2026-11-24T07:00` (that local time).
public enum ClockTarget: Equatable {
    /// Milliseconds forward from bus time now.
    case forward(milliseconds: Int64)
    /// An instant of bus time (ms since the epoch).
    case at(Int64)

    /// Reads `text`, with bus time `now` and the device's `timeZone` for times of day; throws what was expected.
    public init(parsing text: String, now: Int64, timeZone: TimeZone) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("+") {
            guard let seconds = Scenario.duration(String(trimmed.dropFirst())), seconds > 0 else { throw Self.invalid(text) }
            self = .forward(milliseconds: Int64(seconds * 1000))
        } else if let time = LocalDateTime.timeOfDay(trimmed) {
            let today = LocalDateTime(date(busTime: now), in: timeZone)
            var instant = busTime(today.at(hour: time.hour, minute: time.minute, second: time.second)!.resolve(in: timeZone))
            if instant <= now {
                instant = busTime(today.addingDays(1).at(hour: time.hour, minute: time.minute, second: time.second)!.resolve(in: timeZone))
            }
            self = .at(instant)
        } else if let local = LocalDateTime(parsing: trimmed) {
            self = .at(busTime(local.resolve(in: timeZone)))
        } else {
            throw Self.invalid(text)
        }
    }

    /// The request's body fields: `by` or `time`.
    public var requestFields: [String: Int64] {
        switch self {
        case .forward(let milliseconds): return ["by": milliseconds]
        case .at(let time): return ["time": time]
        }
    }

    private static func invalid(_ text: String) -> BusTool.Invalid {
        BusTool.Invalid(description: "'\(text)' is not a time to jump to: give +30m, +2h, +1h30m (forward from now), 07:00 (the next 07:00 on the device) or 2026-11-24T07:00")
    }
}
