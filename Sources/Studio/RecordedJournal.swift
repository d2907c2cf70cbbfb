import BusProtocol
import Foundation

/// A journal file (`shieldbus run --journal`, `tap --record`): one envelope per line, read whole.
enum RecordedJournal {
    /// The events of the journal at `path`; a line that does not decode is an error naming the line.
    static func load(path: String) throws -> [Envelope] {
        guard let data = FileManager.default.contents(atPath: path) else { throw StudioError.unreadableJournal(path: path) }
        var envelopes: [Envelope] = []
        for (index, line) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            do {
                envelopes.append(try WireCodec.decodeEnvelope(Array(line.utf8)))
            } catch {
                throw StudioError.badJournalLine(path: path, line: index + 1, reason: "\(error)")
            }
        }
        return envelopes
    }
}

/// Why the Studio cannot start or cannot do what the page asked.
public enum StudioError: Error, CustomStringConvertible, Equatable {
    case unreadableJournal(path: String)
    case badJournalLine(path: String, line: Int, reason: String)
    case missingResource(name: String)

    public var description: String {
        switch self {
        case .unreadableJournal(let path): return "cannot read the journal \(path)"
        case .badJournalLine(let path, let line, let reason): return "\(path):\(line): not a journal line (\(reason))"
        case .missingResource(let name): return "the Studio's resource \(name) is missing from its bundle (a broken build?)"
        }
    }
}
