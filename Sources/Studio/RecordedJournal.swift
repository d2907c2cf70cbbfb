import BusProtocol
import Foundation

/// A journal file (`shieldbus run --journal`, `tap --record`): one envelope per line, read back from the file on
/// demand. The Studio keeps only where each event's line is, and the narrator as it was every `checkpointInterval`
/// events, so that a day or a year of journal costs a few bytes per event, not the events.
final class RecordedJournal: @unchecked Sendable {
    let path: String
    /// The byte range of each event's line in the file.
    private var lines: [Range<Int>] = []
    /// The narrator before event `k × checkpointInterval`.
    private var checkpoints: [EventNarrator] = []
    static let checkpointInterval = 1000
    /// How many bytes are read between two reports of progress.
    static let progressBytes = 8 << 20

    var count: Int { lines.count }

    /// Reads the journal at `path` once, through; a line that does not decode is an error naming the line. `progress`
    /// hears how far the reading got (bytes read, of the file's size) every few megabytes: a large journal takes seconds.
    init(path: String, timeZone: TimeZone, progress: (Int, Int) -> Void = { _, _ in }) throws {
        self.path = path
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StudioError.unreadableJournal(path: path) }
        defer { try? handle.close() }
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
        var narrator = EventNarrator(timeZone: timeZone)
        var lineNumber = 0
        var told = 0
        do {
            _ = try JournalLines.read(handle, from: 0, unterminatedToo: true) { bytes, offset in
                lineNumber += 1
                if offset - told >= Self.progressBytes {
                    told = offset
                    progress(offset, size)
                }
                guard !JournalLines.isBlank(bytes) else { return true }
                let envelope = try Self.decode(bytes, path: path, line: lineNumber)
                if lines.count % Self.checkpointInterval == 0 { checkpoints.append(narrator) }
                _ = narrator.narrate(envelope)
                lines.append(offset..<offset + bytes.count)
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
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StudioError.unreadableJournal(path: path) }
        defer { try? handle.close() }
        let span = lines[first].lowerBound..<lines[range.upperBound - 1].upperBound
        let bytes: Data
        do {
            try handle.seek(toOffset: UInt64(span.lowerBound))
            bytes = try handle.read(upToCount: span.count) ?? Data()
        } catch {
            throw StudioError.unreadableJournal(path: path)
        }
        guard bytes.count == span.count else { throw StudioError.journalChanged(path: path) }
        var events: [String] = []
        for index in first..<range.upperBound {
            let line = lines[index]
            let start = bytes.startIndex + line.lowerBound - span.lowerBound
            let text = narrator.narrate(try Self.decode(bytes[start..<start + line.count], path: path, line: nil))
            if index >= range.lowerBound { events.append(text) }
        }
        return events
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

    public var description: String {
        switch self {
        case .unreadableJournal(let path): return "cannot read the journal \(path)"
        case .badJournalLine(let path, let line, let reason): return "\(path):\(line): not a journal line (\(reason))"
        case .journalChanged(let path): return "the journal \(path) changed while the Studio replayed it; start the Studio again"
        case .missingResource(let name): return "the Studio's resource \(name) is missing from its bundle (a broken build?)"
        }
    }
}
