import BusProtocol
import Foundation

/// The journal: every sequenced event's envelope, one JSON object per line, in sequence order.
///
/// It is the record of a run: `shieldbus replay` plays it back, and two virtual runs of one scenario
/// produce identical journals.
final class Journal {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    /// The file's length: where the next flush starts (a regular file's; a FIFO or a device has none to cut back to).
    private var written: UInt64 = 0
    private let isRegularFile: Bool
    let path: String
    /// When appending: the latest bus time of the lines cut off (journaled by a broker killed before it saved them).
    /// The device acted on them already, so a resumed run's clock must not start before it.
    private(set) var cutOffReached: BusTime?
    /// When appending: the bytes of the previous runs' journal kept, each line whole and saved (the rest was cut off).
    private(set) var kept: UInt64 = 0

    /// `appending`: goes on after what is there (a resumed run); otherwise starts the file afresh. `keepingThrough`:
    /// when appending, the last sequence number the previous broker saved in `bus.sqlite` — lines after it were
    /// written just before a SIGKILL that came before the save, so they were never delivered and are cut off
    /// (a plugin sends such a publication again; kept, it would be journaled twice).
    init(path: String, appending: Bool = false, keepingThrough savedSeq: UInt64? = nil) throws {
        self.path = path
        let opened = try JournalFile.openForWriting(path, appending: appending)
        if appending && opened.isRegularFile {
            // A line torn by the SIGKILL that ended the last run is cut off, so appended lines stay whole.
            let contents = try Data(contentsOf: URL(fileURLWithPath: path))
            let end = Self.end(of: contents, keepingThrough: savedSeq)
            cutOffReached = contents[end...].split(separator: 0x0A).compactMap { try? WireCodec.decodeEnvelope(Array($0)).time }.max()
            try opened.handle.truncate(atOffset: UInt64(end))
            self.written = UInt64(end)
            kept = UInt64(end)
            try opened.handle.seekToEnd()
        }
        self.handle = opened.handle
        isRegularFile = opened.isRegularFile
        buffer.reserveCapacity(1 << 16)
    }

    /// Where the kept part of a journal ends: after its last whole line, and before the first line numbered after
    /// `savedSeq` (lines are in sequence order, so only the last few are read).
    static func end(of written: Data, keepingThrough savedSeq: UInt64?) -> Int {
        var end = written.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        guard let savedSeq else { return end }
        while end > 0 {
            let start = written[..<(end - 1)].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
            guard let line = try? WireCodec.decodeEnvelope(Array(written[start..<(end - 1)])), line.seq > savedSeq else { break }
            end = start
        }
        return end
    }

    /// Buffers an envelope; whether the buffer is due to be written (`flush`).
    func append(_ envelopeJSON: [UInt8]) -> Bool {
        buffer.append(contentsOf: envelopeJSON)
        buffer.append(0x0A)
        return buffer.count >= 1 << 16
    }

    /// Writes what is buffered. On failure (disk full, read-only) a partly written line is cut off again and
    /// everything stays buffered, to be written by a later flush once there is room: nothing is dropped, no line
    /// is torn, and nothing crashes.
    /// One `write` from the buffer itself: no copy, and no asking the file where it ends (the journal knows).
    func flush() throws {
        guard !buffer.isEmpty else { return }
        var sent = 0
        let failure: Int32? = buffer.withUnsafeBytes { bytes in
            while sent < bytes.count {
                let count = write(handle.fileDescriptor, bytes.baseAddress! + sent, bytes.count - sent)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return count < 0 ? errno : ENOSPC }
                sent += count
            }
            return nil
        }
        if let failure {
            if isRegularFile {
                _ = ftruncate(handle.fileDescriptor, off_t(written))
                _ = lseek(handle.fileDescriptor, off_t(written), SEEK_SET)
            } else {
                buffer.removeFirst(sent)  // a pipe or a device cannot take back what it was sent: not sent again
            }
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
        written += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        defer { try? handle.close() }
        try flush()
    }
}
