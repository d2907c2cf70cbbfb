/// A journal's envelopes (JSON Lines, one compact envelope per line, as the broker writes them), read in place.
public enum JournalLines {
    /// A line of a journal that is not an envelope.
    public struct BadLine: Error, CustomStringConvertible {
        /// Counted from 1, empty lines included.
        public let line: Int
        public let reason: Error

        public var description: String { "line \(line): not a journal line: \(reason)" }
    }

    /// Calls `body` with each non-empty line's envelope in order; throws `BadLine` for the first line that is not one
    /// (an error `body` throws is passed on). Reading bytes, not a `String`: a year's journal is hundreds of MB.
    /// `checkingBodies: false` is for a journal this build's broker has just written, which refused every body its
    /// readers would read two ways when it was published.
    public static func forEach(in bytes: [UInt8], checkingBodies: Bool = true, _ body: (Envelope) throws -> Void) throws {
        var start = 0
        var line = 1
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: WireCodec.batchSeparator) ?? bytes.count
            if end > start {
                let envelope: Envelope
                do {
                    envelope = try WireCodec.decodeEnvelope(in: bytes, range: start..<end)
                    // The envelope's reader leaves the body unscanned; a body its readers would read two ways (a key
                    // written twice, which a journal written before the broker refused it may hold) is named here.
                    if checkingBodies { try JSONParser.check(envelope.body) }
                } catch {
                    throw BadLine(line: line, reason: error)
                }
                try body(envelope)
            }
            start = end + 1
            line += 1
        }
    }

    /// `forEach` over a journal another process may have been killed while writing: a last line without its newline
    /// is torn (a SIGKILL mid-write) and is left unread, even when it reads as an envelope — the broker cuts it off
    /// when it goes on (`Journal`), so it was never journaled; any other bad line is damage and throws `BadLine`.
    public static func forEachUpToATornEnd(in bytes: [UInt8], _ body: (Envelope) throws -> Void) throws {
        guard let last = bytes.last, last != WireCodec.batchSeparator else { return try forEach(in: bytes, body) }
        let end = bytes.lastIndex(of: WireCodec.batchSeparator).map { $0 + 1 } ?? 0
        try forEach(in: Array(bytes[..<end]), body)
    }

    /// Every envelope of a journal (`forEach`'s).
    public static func envelopes(in bytes: [UInt8], checkingBodies: Bool = true) throws -> [Envelope] {
        var envelopes: [Envelope] = []
        try forEach(in: bytes, checkingBodies: checkingBodies) { envelopes.append($0) }
        return envelopes
    }
}
