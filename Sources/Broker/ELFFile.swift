import Foundation

/// A 64-bit little-endian ELF file, read by ranges: what the sandbox (`ELFRunPath`) and the launch templates
/// (`LaunchTemplate.canServe`) need of a program, without reading the program (tens of megabytes).
final class ELFFile {
    /// At most this much is read at once: the headers and tables asked for are far smaller.
    static let readLimit = 64 << 20

    /// The file header's 64 bytes.
    let header: [UInt8]
    private let handle: FileHandle

    /// Nil for anything that is not a 64-bit little-endian ELF file (a script).
    init?(path: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        self.handle = handle
        guard let header = try? handle.read(upToCount: 64), header.count == 64,
              header.starts(with: [0x7F, 0x45, 0x4C, 0x46]), header[4] == 2, header[5] == 1 else {
            try? handle.close()
            return nil
        }
        self.header = [UInt8](header)
    }

    deinit { try? handle.close() }

    /// `count` bytes at `offset` (the section headers are at the end of a program of tens of megabytes); nil beyond the
    /// read limit or the file's end.
    func read(_ offset: UInt64, _ count: Int) -> [UInt8]? {
        guard count <= Self.readLimit else { return nil }
        try? handle.seek(toOffset: offset)
        guard let data = try? handle.read(upToCount: count), data.count == count else { return nil }
        return [UInt8](data)
    }

    /// The little-endian integer of `width` bytes at `at`.
    static func integer(_ bytes: [UInt8], _ at: Int, _ width: Int) -> UInt64 {
        (0..<width).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
    }

    /// Whether a section of this name is among the section headers.
    func hasSection(named name: String) -> Bool {
        let table = Self.integer(header, 0x28, 8), entrySize = Int(Self.integer(header, 0x3A, 2)), names = Self.integer(header, 0x3E, 2)
        guard entrySize >= 64, let section = read(table + names * UInt64(entrySize), 64),
              let text = read(Self.integer(section, 0x18, 8), Int(Self.integer(section, 0x20, 8))) else { return false }
        let wanted = [0] + Array(name.utf8) + [0]
        return text.indices.contains { text[$0...].starts(with: wanted) }
    }
}
