import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A store that lost transactions it had committed: its write-ahead log (`-wal`), which held them until a
/// checkpoint, was deleted, zeroed, cut or damaged — SQLite then opens the file without a word, older.
public struct LostCommits: Error, CustomStringConvertible, Sendable {
    public let path: String
    /// How far the file's own count goes, and how far the note beside it says it went.
    public let stored: Int64
    public let noted: Int64

    public var description: String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return "it holds \(stored) committed writes, but \(noted) were committed: its write-ahead log (\(name)-wal) was deleted or damaged"
    }
}

/// The note beside a store stayed locked longer than the wait allowed: a process holding it is stopped or hung.
public struct CommitNoteBusy: Error, CustomStringConvertible, Sendable {
    public let path: String
    public let timeout: TimeInterval

    public var description: String {
        "the commit note \(path) stayed locked by another process for \(timeout) s (one holding it is stopped or hung)"
    }
}

/// The note beside a store could not be opened or written (replaced by something that is not a file, a full or
/// read-only disk).
public struct CommitNoteUnwritable: Error, CustomStringConvertible, Sendable {
    public let path: String
    public let errno: Int32

    public var description: String { "cannot write the commit note \(path): \(String(cString: strerror(errno)))" }
}

/// `<store>-committed`: a number that only grows — a store's last committed change or write — written beside it
/// after each commit, with the machine's boot it was written in. A store whose own count ends before it lost
/// committed writes, unless the machine went down since (below).
///
/// Several processes may note into one file at once (an App Group's writers), so every access holds the file's
/// `flock` (waiting at most `lockTimeout`, then `CommitNoteBusy`) — but the notes after the first of a store opened
/// `.exclusive`, which nobody else can commit to or note for (`CommitNoteFile`) — and a note only ever raises the number: unlocked,
/// one writer's shorter number written over another's longer one leaves digits of both ("8" over "10" reads "80") —
/// a number nobody committed, ahead of the store, and a sound store refused as damaged.
///
/// Written without a sync, as the stores commit (`synchronous = NORMAL`): a killed process loses neither, but a
/// power cut or an operating-system crash may keep the note and lose the log's last frames, which SQLite had not
/// flushed. Such a lead is only possible across a restart of the machine — the note's boot is not this one — and
/// only with the log's header whole: SQLite flushes it before a log's first frame, so a log deleted or zeroed is
/// damage whenever it happened (`verify`).
public enum CommitNote {
    public static func path(besides store: String) -> String { store + suffix }
    static let suffix = "-committed"

    /// How long an access waits for another process's hold on the note (held for a read and a write at a time).
    public static let lockTimeout: TimeInterval = 5

    /// What a note says: the number, and the boot of the machine it was written in (nil in a note without one).
    public struct Reading: Equatable, Sendable {
        public let number: Int64
        public let boot: String?

        public init(number: Int64, boot: String?) {
            self.number = number
            self.boot = boot
        }
    }

    /// This boot of the machine (Linux's `boot_id`), nil where the system does not say.
    public static let currentBoot: String? = {
        // Read with POSIX calls and trimmed byte by byte (the file is ASCII), not with Foundation's
        // `String(contentsOfFile:)` and `trimmingCharacters(in:)`: every process that opens a store reads it.
        let descriptor = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { buffer -> String? in
            var count = 0
            while count < buffer.count {
                let got = Glibc.read(descriptor, buffer.baseAddress! + count, buffer.count - count)
                if got < 0 && errno == EINTR { continue }
                guard got >= 0 else { return nil }
                if got == 0 { break }
                count += got
            }
            let isSpace = { (byte: UInt8) in byte == 0x20 || (0x09...0x0D).contains(byte) }
            var start = 0, end = count
            while start < end, isSpace(buffer[start]) { start += 1 }
            while end > start, isSpace(buffer[end - 1]) { end -= 1 }
            let boot = UnsafeBufferPointer(rebasing: buffer[start..<end])
            guard !boot.isEmpty, !boot.contains(UInt8(ascii: " ")) else { return nil }
            // An id is ASCII, which needs no validating (`String(validating:)` is generic, a run-time cost of its own).
            return boot.allSatisfy({ $0 < 0x80 }) ? String(decoding: boot, as: UTF8.self) : String(validating: boot, as: UTF8.self)
        }
    }()

    /// The number noted beside `store`, nil when there is none or it is unreadable (which says nothing).
    public static func read(besides store: String, timeout: TimeInterval = lockTimeout) throws -> Int64? {
        try reading(besides: store, timeout: timeout)?.number
    }

    /// The note beside `store`, nil when there is none or it is unreadable.
    public static func reading(besides store: String, timeout: TimeInterval = lockTimeout) throws -> Reading? {
        let descriptor = open(path(besides: store), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        try lock(descriptor, LOCK_SH, store: store, timeout: timeout)
        return reading(in: descriptor)
    }

    /// Raises the note beside `store` to `number` (a lower number changes nothing). A note that cannot be opened or
    /// written throws `CommitNoteUnwritable`: behind the store it proves nothing wrong, but a lost log would then go
    /// unnoticed, so the caller says so.
    public static func note(_ number: Int64, besides store: String, timeout: TimeInterval = lockTimeout) throws {
        let descriptor = open(path(besides: store), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let failure = errno
            throw CommitNoteUnwritable(path: path(besides: store), errno: failure)
        }
        defer { close(descriptor) }
        try lock(descriptor, LOCK_EX, store: store, timeout: timeout)
        if let noted = reading(in: descriptor), noted.number >= number { return }
        guard write(number, to: descriptor) else {
            let failure = errno
            throw CommitNoteUnwritable(path: path(besides: store), errno: failure)
        }
    }

    /// Checks the store beside its note: `stored` (read after the note, while it is held, so that no commit noted
    /// meanwhile can make it look short) is its own count. Throws `LostCommits` when the store holds fewer commits
    /// than were noted in this boot, or its log is gone or zeroed. A note from an earlier boot that leads a store
    /// with a whole log is what a power cut leaves: the note is brought down to the store, and the commits lost
    /// that way returned (0 when none were). Without a note, nothing is known and nothing is written.
    @discardableResult
    public static func verify(besides store: String, stored: () throws -> Int64, timeout: TimeInterval = lockTimeout) throws -> Int64 {
        // Read-only (a read-only disk), the note is judged as it is and left so.
        var writable = true
        var descriptor = open(path(besides: store), O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0 {
            writable = false
            descriptor = open(path(besides: store), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        }
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        try lock(descriptor, writable ? LOCK_EX : LOCK_SH, store: store, timeout: timeout)
        guard let noted = reading(in: descriptor) else { return 0 }
        let held = try stored()
        guard noted.number > held else {
            // Judged by this boot from now on: a lead found later cannot be an earlier boot's power cut.
            if writable, noted.boot != currentBoot { write(noted.number, to: descriptor) }
            return 0
        }
        let earlierBoot = currentBoot != nil && noted.boot != nil && noted.boot != currentBoot
        guard earlierBoot, WriteAheadLogHeader.isWhole(at: store + "-wal") else {
            throw LostCommits(path: store, stored: held, noted: noted.number)
        }
        if writable { write(held, to: descriptor) }
        return noted.number - held
    }

    /// What a store that lost `count` commits to the machine's restart (`verify`) says: its opener logs it.
    public static func restartLoss(_ count: Int64, of store: String) -> String? {
        guard count > 0 else { return nil }
        return "\(store) lost its last \(count) committed write(s) with the machine's restart (a power cut or an operating-system crash: not yet flushed to the disk); going on with what it holds"
    }

    // MARK: The file

    /// Fixed width (the number's digits, a space, a boot id's 36 characters), so a note never has to shorten the file.
    static let digits = 20, width = 57
    /// How much of a note is read: its number and boot, and room past a width other writers may have left.
    static let readLength = 128

    /// Takes the note's `flock`, polling until `timeout`: a holder that never lets go is an error, not a hang.
    static func lock(_ descriptor: Int32, _ operation: Int32, store: String, timeout: TimeInterval) throws {
        if flock(descriptor, operation | LOCK_NB) == 0 { return }
        let deadline = Date().addingTimeInterval(timeout)
        while flock(descriptor, operation | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, Date() < deadline else {
                throw CommitNoteBusy(path: path(besides: store), timeout: timeout)
            }
            usleep(1_000)
        }
    }

    /// The note's bytes after the number: a space and this boot, padded to the width.
    private static let bootField: [UInt8] = {
        let field = Array((" " + (currentBoot ?? "")).utf8)
        return field + [UInt8](repeating: UInt8(ascii: " "), count: max(0, width - digits - field.count))
    }()

    /// Whether the whole note was written. Made in a buffer on the stack: it is written at every commit of every store.
    @discardableResult
    static func write(_ number: Int64, to descriptor: Int32) -> Bool {
        withText(of: number) { pwrite(descriptor, $0.baseAddress, $0.count, 0) == $0.count }
    }

    /// Gives `body` the note's bytes for `number` (a number of `digits` digits, zero-padded, then `bootField`): made
    /// without allocating for any number but a negative one, which no store counts.
    static func withText<Result>(of number: Int64, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        guard number >= 0 else {
            let text = Array(String(number).utf8)
            let bytes = [UInt8](repeating: UInt8(ascii: "0"), count: max(0, digits - text.count)) + text + bootField
            return bytes.withUnsafeBytes(body)
        }
        let count = digits + bootField.count
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { bytes in
            var rest = number
            for index in stride(from: digits - 1, through: 0, by: -1) {
                bytes[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            for (offset, byte) in bootField.enumerated() { bytes[digits + offset] = byte }
            return body(UnsafeRawBufferPointer(bytes))
        }
    }

    /// The note's number alone, read without allocating: it is read at every commit of every store.
    static func number(in descriptor: Int32) -> Int64? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: readLength) { buffer in
            let count = pread(descriptor, buffer.baseAddress, buffer.count, 0)
            guard count > 0 else { return nil }
            return number(in: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// The number a note's first bytes (at most `readLength` of them, as `number(in:)` reads) begin with.
    static func number(in bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        parse(bytes)?.number
    }

    private static func reading(in descriptor: Int32) -> Reading? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: readLength) { buffer in
            let count = pread(descriptor, buffer.baseAddress, buffer.count, 0)
            guard count > 0 else { return nil }
            let bytes = UnsafeBufferPointer(rebasing: buffer[..<count])
            guard let (number, numberEnd) = parse(bytes) else { return nil }
            let bootStart = bytes[numberEnd...].firstIndex { !isSpace($0) } ?? bytes.endIndex
            let bootEnd = bytes[bootStart...].firstIndex(where: isSpace) ?? bytes.endIndex
            return Reading(number: number, boot: bootStart < bootEnd ? String(decoding: bytes[bootStart..<bootEnd], as: UTF8.self) : nil)
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }

    /// The number the note begins with (after any spaces) as `Int64(_: String)` reads it — an optional sign, then
    /// digits, nil past `Int64`'s range — and where it ends.
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> (number: Int64, end: Int)? {
        var index = bytes.firstIndex { !isSpace($0) } ?? bytes.endIndex
        let end = bytes[index...].firstIndex(where: isSpace) ?? bytes.endIndex
        let negative = index < end && bytes[index] == UInt8(ascii: "-")
        if index < end, negative || bytes[index] == UInt8(ascii: "+") { index += 1 }
        guard index < end else { return nil }
        var number: Int64 = 0
        while index < end {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, over) = number.multipliedReportingOverflow(by: 10)
            let (next, past) = negative ? shifted.subtractingReportingOverflow(Int64(digit)) : shifted.addingReportingOverflow(Int64(digit))
            guard !over, !past else { return nil }
            number = next
            index += 1
        }
        return (number, end)
    }
}

/// The first 32 bytes of a SQLite write-ahead log: its magic number, version, page size, checkpoint sequence, salts
/// and a checksum of the first 24 (sqlite.org/fileformat2.html § 4.1). SQLite flushes it to the disk before the
/// log's first frame, so no power cut leaves a log that held commits without it.
enum WriteAheadLogHeader {
    /// Whether the log at `path` has a header SQLite would take (missing, short or zeroed: false).
    static func isWhole(at path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 32), data.count == 32 else { return false }
        let bytes = [UInt8](data)
        func word(_ offset: Int, bigEndian: Bool = true) -> UInt32 {
            let value = bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return bigEndian ? value : value.byteSwapped
        }
        let magic = word(0)
        guard magic == 0x377f_0682 || magic == 0x377f_0683, word(4) == 3_007_000 else { return false }
        var s0: UInt32 = 0, s1: UInt32 = 0
        for offset in stride(from: 0, to: 24, by: 8) {
            s0 = s0 &+ word(offset, bigEndian: magic & 1 == 1) &+ s1
            s1 = s1 &+ word(offset + 4, bigEndian: magic & 1 == 1) &+ s0
        }
        return s0 == word(24) && s1 == word(28)
    }
}
