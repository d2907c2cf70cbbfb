import BusClient
import BusProtocol
import BusTools
import DeviceAPI
import Foundation
import ScreenTime

/// A journal file (`shieldbus run --journal`, `tap --record`): one envelope per line, read back from the file on
/// demand. The Studio keeps only where each event's line is, its instant, which events the timeline tells (and of
/// what kind), and the narrator as it was every `checkpointInterval` events, so that a day or a year of journal costs
/// a few bytes per event, not the events. Immutable once read: the server's requests read it from any thread.
final class RecordedJournal: @unchecked Sendable {
    let path: String
    let timeZone: TimeZone
    /// The byte range of each event's line in the file.
    private var lines: [Range<Int>] = []
    /// Each event's bus time (never decreasing along a journal: bus time does not run backwards).
    private var times: [Int64] = []
    /// The events with a timeline line (`Timeline.describe`), ascending, and each one's kind (an index into `kindNames`).
    private var stories: [Int32] = []
    private var storyKinds: [UInt8] = []
    private var kindNames: [String] = []
    /// Where the events with the seqs asked for at start are (the checker's violations, `--at`): the count to show
    /// to stand just after each (the first event with that seq).
    private(set) var places: [UInt64: Int] = [:]
    /// The narrator before event `k × checkpointInterval`.
    private var checkpoints: [EventNarrator] = []
    static let checkpointInterval = 1000
    /// How often the reading says how far it got (wall time), and how many lines it reads between two looks at the clock.
    static let progressMilliseconds: Int64 = 1000
    static let progressLines = 1000

    var count: Int { lines.count }

    /// Reads the journal at `path` once, through; a line that does not decode is an error naming the line. `progress`
    /// hears how far the reading got (bytes read, of the file's size) each `progressEvery` ms of wall time: a journal of
    /// a few MB already takes seconds, before the page can be opened.
    init(path: String, timeZone: TimeZone, placing seqs: Set<UInt64> = [], progressEvery: Int64 = progressMilliseconds,
         progress: (Int, Int) -> Void = { _, _ in }) throws {
        self.path = path
        self.timeZone = timeZone
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StudioError.unreadableJournal(path: path) }
        defer { try? handle.close() }
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
        var narrator = EventNarrator(timeZone: timeZone)
        var lineNumber = 0
        var told = monotonicMilliseconds()
        do {
            _ = try JournalLines.read(handle, from: 0, unterminatedToo: true) { bytes, offset in
                lineNumber += 1
                if lineNumber % Self.progressLines == 0, monotonicMilliseconds() - told >= progressEvery {
                    told = monotonicMilliseconds()
                    progress(offset, size)
                }
                guard !JournalLines.isBlank(bytes) else { return true }
                let envelope = try Self.decode(bytes, path: path, line: lineNumber)
                if lines.count % Self.checkpointInterval == 0 { checkpoints.append(narrator) }
                narrator.advance(envelope)
                if let kind = Timeline.describe(envelope)?.kind {
                    stories.append(Int32(lines.count))
                    storyKinds.append(kindIndex(kind))
                }
                lines.append(offset..<offset + bytes.count)
                times.append(envelope.time)
                if seqs.contains(envelope.seq), places[envelope.seq] == nil { places[envelope.seq] = lines.count }
                return true
            }
        } catch let error as StudioError {
            throw error
        } catch {
            throw StudioError.unreadableJournal(path: path)
        }
    }

    /// The page form of the events in `range` (indices into the journal), exactly as narrating the whole journal
    /// from its start gives them: read back from the file, from the nearest checkpoint before.
    func events(in range: Range<Int>) throws -> [String] {
        guard !range.isEmpty else { return [] }
        let first = range.lowerBound / Self.checkpointInterval * Self.checkpointInterval
        var narrator = checkpoints[first / Self.checkpointInterval]
        let span = lines[first].lowerBound..<lines[range.upperBound - 1].upperBound
        let bytes = try read(span)
        var events: [String] = []
        for index in first..<range.upperBound {
            let line = lines[index]
            let start = bytes.startIndex + line.lowerBound - span.lowerBound
            let envelope = try Self.decode(bytes[start..<start + line.count], path: path, line: nil)
            if index >= range.lowerBound { events.append(narrator.narrate(envelope, index: index)) } else { narrator.advance(envelope) }
        }
        return events
    }

    private func kindIndex(_ kind: String) -> UInt8 {
        if let index = kindNames.firstIndex(of: kind) { return UInt8(index) }
        kindNames.append(kind)
        return UInt8(kindNames.count - 1)
    }

    // MARK: Finding events without reading them

    /// How many events of each timeline kind the journal has.
    var storyCounts: [String: Int] {
        var counts: [String: Int] = [:]
        for kind in storyKinds { counts[kindNames[Int(kind)], default: 0] += 1 }
        return counts
    }

    /// How many events there are at or before bus time `time` (the count to show to stand at that instant).
    func count(atOrBefore time: Int64) -> Int {
        Self.firstIndex(times.count) { times[$0] > time }
    }

    /// The count to show to stand at the next `clock` (a local time of day, to its last millisecond) from the instant
    /// after `count` events: on the day shown when it is still to come, else on the next day the journal has events;
    /// nil when the journal ends before.
    func count(atNext clock: DateComponents, after count: Int) -> Int? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let now = times[max(0, min(count, times.count) - 1)]
        let shown = date(busTime: now)
        func at(_ day: Date) -> Int64? {
            calendar.date(bySettingHour: clock.hour ?? 0, minute: clock.minute ?? 0, second: clock.second ?? 0, of: day)
                .map { DeviceAPI.busTime($0) + 999 }
        }
        if let today = at(shown), today >= now { return self.count(atOrBefore: today) }
        let tomorrow = ScheduleCalendar(timeZone: timeZone).startOfNextDay(after: shown)
        let startOfTomorrow = DeviceAPI.busTime(tomorrow)
        let next = Self.firstIndex(times.count) { self.times[$0] >= startOfTomorrow }
        guard next < times.count, let then = at(date(busTime: times[next])) else { return nil }
        return self.count(atOrBefore: then)
    }

    /// The index of the first event with this seq (a restarted broker may number again), nil when none has it.
    func index(ofSeq seq: UInt64) throws -> Int? {
        // Seqs rise along a broker's run: look by halves first, then read through (a journal of several runs).
        var low = 0, high = lines.count
        while low < high {
            let middle = (low + high) / 2
            if try envelope(at: middle).seq >= seq { high = middle } else { low = middle + 1 }
        }
        if low < lines.count, try envelope(at: low).seq == seq { return low }
        for start in stride(from: 0, to: lines.count, by: 1000) {
            let chunk = try envelopes(in: start..<min(start + 1000, lines.count))
            if let offset = chunk.firstIndex(where: { $0.seq == seq }) { return start + offset }
        }
        return nil
    }

    /// The next (`step` 1) or previous (-1) event of timeline kind `kind` after (before) the event at `index`.
    func story(ofKind kind: String, from index: Int, step: Int) -> Int? {
        guard let wanted = kindNames.firstIndex(of: kind).map(UInt8.init) else { return nil }
        var at = Self.firstIndex(stories.count) { step > 0 ? Int(self.stories[$0]) > index : Int(self.stories[$0]) >= index } - (step > 0 ? 0 : 1)
        while at >= 0 && at < stories.count {
            if storyKinds[at] == wanted { return Int(stories[at]) }
            at += step > 0 ? 1 : -1
        }
        return nil
    }

    /// For each timeline kind, the columns (of `columns` across events `range`) that hold at least one such event.
    func marks(in range: Range<Int>, columns: Int) -> [String: [Int]] {
        var marked: [String: Set<Int>] = [:]
        let first = Self.firstIndex(stories.count) { Int(self.stories[$0]) >= range.lowerBound }
        var at = first
        while at < stories.count, Int(stories[at]) < range.upperBound {
            let column = (Int(stories[at]) - range.lowerBound) * columns / max(1, range.count)
            marked[kindNames[Int(storyKinds[at])], default: []].insert(column)
            at += 1
        }
        return marked.mapValues { $0.sorted() }
    }

    /// The newest `limit` events before `count` with a timeline line, oldest first (the timeline at that instant): their
    /// page form but for the schedules, which only the fold uses (so are these of `matching`).
    func stories(before count: Int, limit: Int) throws -> [String] {
        let end = Self.firstIndex(stories.count) { Int(self.stories[$0]) >= count }
        var narrator = EventNarrator(timeZone: timeZone)
        return try stories[max(0, end - limit)..<end].map { narrator.narrate(try envelope(at: Int($0)), schedules: false, index: Int($0)) }
    }

    /// The newest `limit` events before `count` whose topic starts with `prefix` and whose sender is `source` (when
    /// given), oldest first, looking back through at most `scanLimit` events: the bus filtered at that instant. Also
    /// how many events were looked at, and whether that reached the journal's start.
    func matching(before count: Int, prefix: String, source: String?, limit: Int, scanLimit: Int) throws -> (events: [String], scanned: Int, complete: Bool) {
        var found: [String] = []
        var narrator = EventNarrator(timeZone: timeZone)
        var looked = count  // the lowest index looked at
        let stop = max(0, count - scanLimit)
        while looked > stop && found.count < limit {
            let chunk = max(stop, looked - 1000)..<looked
            for (offset, envelope) in try envelopes(in: chunk).enumerated().reversed() where found.count < limit {
                looked = chunk.lowerBound + offset
                if envelope.topic.hasPrefix(prefix), source.map({ envelope.source == $0 }) ?? true {
                    found.append(narrator.narrate(envelope, schedules: false, index: looked))
                }
            }
        }
        return (found.reversed(), count - looked, found.count < limit && looked == 0)
    }

    private func envelope(at index: Int) throws -> Envelope {
        try envelopes(in: index..<index + 1)[0]
    }

    /// The envelopes of the events in `range`, read back from the file.
    private func envelopes(in range: Range<Int>) throws -> [Envelope] {
        let bytes = try read(lines[range.lowerBound].lowerBound..<lines[range.upperBound - 1].upperBound)
        return try range.map { index in
            let line = lines[index]
            let start = bytes.startIndex + line.lowerBound - lines[range.lowerBound].lowerBound
            return try Self.decode(bytes[start..<start + line.count], path: path, line: nil)
        }
    }

    private func read(_ span: Range<Int>) throws -> Data {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StudioError.unreadableJournal(path: path) }
        defer { try? handle.close() }
        let bytes: Data
        do {
            try handle.seek(toOffset: UInt64(span.lowerBound))
            bytes = try handle.read(upToCount: span.count) ?? Data()
        } catch {
            throw StudioError.unreadableJournal(path: path)
        }
        guard bytes.count == span.count else { throw StudioError.journalChanged(path: path) }
        return bytes
    }

    /// The first index in 0..<count for which `isAfter` holds (`count` when none does); `isAfter` holds from some index on.
    static func firstIndex(_ count: Int, _ isAfter: (Int) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if isAfter(middle) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    private static func decode(_ bytes: Data, path: String, line: Int?) throws -> Envelope {
        do {
            return try WireCodec.decodeEnvelope(Array(bytes))
        } catch {
            guard let line else { throw StudioError.journalChanged(path: path) }
            throw StudioError.badJournalLine(path: path, line: line, reason: "\(error)")
        }
    }
}

/// Why the Studio cannot start or cannot do what the page asked.
public enum StudioError: Error, CustomStringConvertible, Equatable {
    case unreadableJournal(path: String)
    case badJournalLine(path: String, line: Int, reason: String)
    case journalChanged(path: String)
    case missingResource(name: String)
    /// The program was copied without its resource bundle.
    case missingResourceBundle(path: String, reason: String, programFolder: String)
    case noEvent(seq: UInt64, path: String)

    public var description: String {
        switch self {
        case .noEvent(let seq, let path):
            return "--at \(seq): the journal \(path) has no event #\(seq) (`shieldbus check` prints an --at for each violation it finds)"
        case .unreadableJournal(let path): return "cannot read the journal \(path)"
        case .badJournalLine(let path, let line, let reason): return "\(path):\(line): not a journal line (\(reason))"
        case .journalChanged(let path): return "the journal \(path) changed while the Studio replayed it; start the Studio again"
        case .missingResource(let name): return "the Studio's resource \(name) is missing from its bundle (a broken build?)"
        case .missingResourceBundle(let path, let reason, let programFolder):
            return "the Studio's resource bundle is missing: \(path) cannot be read (\(reason)); copy the ShieldBus_Studio.resources "
                + "folder from where shieldbus was built (its build products, e.g. .build/release/) beside the program, into \(programFolder)/"
        }
    }
}
