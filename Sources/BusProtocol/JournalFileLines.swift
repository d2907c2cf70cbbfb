// JournalLines, from a file: a journal's lines in order, read in chunks from a byte offset (the Studio's replayed
// journal, the history a tool reads from a live broker's journal).
import Foundation

extension JournalLines {
    /// Whether a line holds nothing but blanks (skipped, as every journal reader does).
    public static func isBlank(_ bytes: Data) -> Bool {
        !bytes.contains { ![0x20, 0x09, 0x0D].contains($0) }
    }

    /// Hands `body` each line of the file from `offset` on (its bytes, without the newline, and where it starts) until
    /// `body` returns false; returns the offset after the last line handed over. A last line with no newline is handed
    /// over only when `unterminatedToo` (a finished file): while a broker writes, it may be half of a line.
    public static func read(_ handle: FileHandle, from offset: Int, unterminatedToo: Bool, _ body: (Data, Int) throws -> Bool) throws -> Int {
        try handle.seek(toOffset: UInt64(offset))
        var buffer = Data()
        var bufferOffset = offset
        while true {
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty {
                guard unterminatedToo, !buffer.isEmpty else { return bufferOffset }
                _ = try body(buffer, bufferOffset)
                return bufferOffset + buffer.count
            }
            buffer.append(chunk)
            var start = buffer.startIndex
            while let newline = buffer[start...].firstIndex(of: 0x0A) {
                let lineOffset = bufferOffset + (start - buffer.startIndex)
                let goOn = try body(buffer[start..<newline], lineOffset)
                start = newline + 1
                if !goOn { return bufferOffset + (start - buffer.startIndex) }
            }
            bufferOffset += start - buffer.startIndex
            buffer = Data(buffer[start...])
        }
    }
}
