import BusProtocol
import Foundation

/// A journal (JSON Lines, one envelope a line) read back, for tests that judge what a run told.
public enum JournalLines {
    /// Every event of a journal that is complete: a line that is not an envelope is an error, since a finished run
    /// leaves none.
    public static func decode(_ bytes: Data) throws -> [Envelope] {
        try lines(bytes).map { try WireCodec.decodeEnvelope(Array($0.utf8)) }
    }

    /// Every event of the complete journal file at `path`; a file not written is an empty journal.
    public static func read(_ path: String) throws -> [Envelope] {
        try decode(FileManager.default.contents(atPath: path) ?? Data())
    }

    /// The events so far of a journal still being written, or of a stream: a line cut mid-write is left out.
    public static func eventsSoFar(_ bytes: Data) -> [Envelope] {
        lines(bytes).compactMap { try? WireCodec.decodeEnvelope(Array($0.utf8)) }
    }

    /// The events so far of the journal file at `path` (none while it does not exist).
    public static func eventsSoFar(atPath path: String) -> [Envelope] {
        eventsSoFar(FileManager.default.contents(atPath: path) ?? Data())
    }

    private static func lines(_ bytes: Data) -> [Substring] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n")
    }
}
