// ZoneOffsets: a zone's offset read once for each stretch of time between its transitions, for the whole process.

import Foundation
import Synchronization

/// The offsets of the zones read lately, each kept for the stretch of instants it holds over: from the earliest instant
/// read in the stretch up to the zone's next transition. Reading an offset goes through ICU's zone behind Foundation's lock,
/// and a plugin reads the day's key or the wall clock several times an event, in the same stretch nearly every time.
///
/// The answers are the zone's own: `nextDaylightSavingTimeTransition(after:)` names every change of a zone's offset,
/// standard or daylight (ICU's next transition; `ZoneOffsetsTests` compare instants a day, an hour and a second either side of each change
/// 1900–2100 in zones that change often or oddly), so no instant inside a stretch has another offset. Kept by the
/// zone's identifier, as a zone's rules do not change while a process runs and the process's own zone
/// (`TimeZone.current`), set anew, has another identifier; the SDK forgets every stretch then too (`forgetAll`).
public enum ZoneOffsets {
    /// An offset and the instants it holds for: from `from` (the earliest instant read in it) up to `until` (the
    /// zone's next transition; nil: none, a fixed zone or the rules' end).
    struct Stretch {
        let identifier: String
        var from: Int
        let until: Int?
        let offset: Int

        func holds(_ instant: Int) -> Bool { instant >= from && until.map { instant < $0 } ?? true }
    }

    /// How many stretches are kept, of any zones: the one a process reads and the one before or after it (a reading
    /// around a transition goes to and fro), in the device's zone and a few others (a change of zone, a journal that
    /// travelled).
    static let mostStretches = 16
    private static let kept = Mutex<[Stretch]>([])
    /// The instants kept, years 1 to 9999: Foundation looks for transitions only so far, and past its limit a zone's
    /// rules still change its offset.
    static let keptInstants = -62_135_596_800...253_402_300_799

    /// The zone's offset from UTC at an instant (whole seconds since 1970), in seconds: `secondsFromGMT(for:)`'s answer.
    public static func offset(of zone: TimeZone, at instant: Int) -> Int {
        guard keptInstants.contains(instant) else { return zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant))) }
        let identifier = zone.identifier
        if let known = kept.withLock({ $0.first { $0.identifier == identifier && $0.holds(instant) }?.offset }) { return known }
        let date = Date(timeIntervalSince1970: TimeInterval(instant))
        let offset = zone.secondsFromGMT(for: date)
        // Transitions fall on whole seconds; one past Int's range (none in the tz database) is read as none.
        let until = zone.nextDaylightSavingTimeTransition(after: date).flatMap { Int(exactly: $0.timeIntervalSince1970.rounded(.up)) }
        remember(Stretch(identifier: identifier, from: instant, until: until, offset: offset))
        return offset
    }

    /// Forgets every stretch: the process's zone was set anew.
    public static func forgetAll() {
        kept.withLock { $0.removeAll() }
    }

    /// Keeps a stretch: one kept up to the same transition now starts at the earlier instant of the two (nothing
    /// changes the offset in between); otherwise it is added, the oldest making room.
    private static func remember(_ stretch: Stretch) {
        kept.withLock { stretches in
            if let index = stretches.firstIndex(where: { $0.identifier == stretch.identifier && $0.until == stretch.until && $0.offset == stretch.offset }) {
                stretches[index].from = min(stretches[index].from, stretch.from)
                return
            }
            if stretches.count >= mostStretches { stretches.removeFirst() }
            stretches.append(stretch)
        }
    }
}
