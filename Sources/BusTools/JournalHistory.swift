// JournalHistory: what the broker journaled before a tap was welcomed, read back from its journal file.
import BusProtocol
import Foundation

/// The events a tap cannot receive: those sequenced before its welcome. The broker journals and flushes each batch
/// before it sends it, and welcomes between batches, so every event up to the welcome's seq is in the journal (or
/// about to be, if a flush failed); with the tap's own events, numbered after it, a tool (the Studio, `tap --from`)
/// has each event once.
public enum JournalHistory {
    /// The journal could not be read, or a line of it is not an envelope.
    public struct Unreadable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Hands `take` the journal's events numbered after `after` through `through`, in order, waiting up to `patience`
    /// milliseconds for lines not written yet; returns the last seq it handed over (`after` when none).
    public static func read(path: String, after: UInt64, through: UInt64, patienceMilliseconds: Int64,
                            _ take: (Envelope) -> Void) throws -> UInt64 {
        guard through > after else { return after }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw Unreadable(description: "cannot read the journal \(path)") }
        defer { try? handle.close() }
        let deadline = Date().addingTimeInterval(Double(patienceMilliseconds) / 1000)
        var offset = 0
        var reached = after
        var done = false
        var lineNumber = 0
        while true {
            offset = try JournalLines.read(handle, from: offset, unterminatedToo: false) { bytes, _ in
                lineNumber += 1
                guard !JournalLines.isBlank(bytes) else { return true }
                let envelope: Envelope
                do {
                    envelope = try WireCodec.decodeEnvelope(Array(bytes))
                } catch {
                    throw Unreadable(description: "\(path):\(lineNumber): not a journal line (\(error))")
                }
                // Lines are in sequence order; a line past `through` (journaled since the welcome) is the tap's to deliver.
                if envelope.seq > through { done = true; return false }
                if envelope.seq > after {
                    take(envelope)
                    reached = envelope.seq
                }
                done = envelope.seq == through
                return !done
            }
            if done || Date() >= deadline { return reached }
            Thread.sleep(forTimeInterval: 0.02)  // the broker has not flushed its last batch yet: look again shortly
        }
    }
}
