import Foundation

/// A 64-bit little-endian ELF file, read by ranges: what the sandbox (`ELFRunPath`) and the launch templates
/// (`LaunchTemplate.canServe`) need of a program, without reading the program (tens of megabytes).
final class ELFFile {
    /// At most this much is read at once: the headers and tables asked for are far smaller.
    static let readLimit = 64 << 20

    /// The file header's 64 bytes.
    let header: [UInt8]
    /// Read with `pread` on a plain descriptor: the broker reads each plugin's program as it plans its sandbox, on the
    /// way to the plugin's start, and a `FileHandle` costs a `stat` and a seek around every read.
    private let descriptor: Int32

    /// Nil for anything that is not a 64-bit little-endian ELF file (a script).
    init?(path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard let header = Self.read(descriptor, 0, 64), header.starts(with: [0x7F, 0x45, 0x4C, 0x46]), header[4] == 2, header[5] == 1 else {
            close(descriptor)
            return nil
        }
        (self.descriptor, self.header) = (descriptor, header)
    }

    deinit { close(descriptor) }

    /// `count` bytes at `offset` (the section headers are at the end of a program of tens of megabytes); nil beyond the
    /// read limit or the file's end.
    func read(_ offset: UInt64, _ count: Int) -> [UInt8]? { Self.read(descriptor, offset, count) }

    private static func read(_ descriptor: Int32, _ offset: UInt64, _ count: Int) -> [UInt8]? {
        guard count >= 0, count <= Self.readLimit, offset <= UInt64(Int64.max) else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return nil }
            done += got
        }
        return bytes
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
