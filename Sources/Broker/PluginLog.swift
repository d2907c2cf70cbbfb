import Foundation
import SQLite

/// A supervised plugin's log file (`<runtime dir>/logs/<name>.log`, appended to by every run of the plugin):
/// where the current run's output starts, and the last thing that run said — usually why it stopped.
struct PluginLog {
    let path: String
    /// The longest last line kept for a status report.
    static let maximumLineCharacters = 400

    /// The file's current size: the offset where a run started now begins writing.
    func endOffset() -> UInt64 {
        FileSize.of(path).map { UInt64($0) } ?? 0
    }

    /// The last non-empty line written at or after `offset`, shortened for a status line; nil when the run said nothing.
    func lastLine(since offset: UInt64) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        // The tail is enough: a last line longer than this is shortened anyway.
        let size = endOffset()
        let start = max(offset, size > 16_384 ? size - 16_384 : 0)
        guard (try? handle.seek(toOffset: start)) != nil, let data = try? handle.readToEnd() else { return nil }
        let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.last { !$0.isEmpty }
        guard let line else { return nil }
        return line.count > Self.maximumLineCharacters ? String(line.prefix(Self.maximumLineCharacters - 1)) + "…" : line
    }
}
