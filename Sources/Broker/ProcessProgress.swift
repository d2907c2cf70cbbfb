import BusClient
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Whether a process is getting on with its work, read from `/proc/<pid>/stat`: its scheduler state, the CPU it has
/// used and the page faults it took. In virtual time every limit on a plugin's process (its acknowledgements, its
/// start's hello, its session's silence, the OS's wait for its answer) asks this before giving the plugin up, so that a
/// machine too busy to run a plugin in time (it is runnable, or its CPU time or page faults rise) is not taken for a
/// plugin that stopped (blocked, idle).
struct ProcessProgress: Equatable {
    /// Clock ticks of CPU, user and system.
    let cpuTicks: UInt64
    /// Page faults, minor and major: a process that runs a few milliseconds at a time (a start mapping its libraries,
    /// a handler reading its store) may be charged no tick between two looks, but touches memory.
    var faults: UInt64 = 0
    /// Running or waiting for a CPU (`R`), or in an uninterruptible wait, mostly the disk (`D`).
    let isBusy: Bool

    /// The reading of `pid`, or nil when it cannot be read (the process ended). Read with `open` and `read` into a
    /// buffer on the stack: the OS's reply deadlines read the answerer at every start, and Foundation would add the
    /// file's attributes, a `String` and a split to each reading.
    static func read(_ pid: pid_t) -> ProcessProgress? {
        let descriptor = "/proc/\(pid)/stat".withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: statCapacity) { buffer -> ProcessProgress? in
            var filled = 0
            while filled < buffer.count {
                let count = Glibc.read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                filled += count
            }
            return parse(UnsafeBufferPointer(rebasing: buffer[..<filled]))
        }
    }

    /// Room for a whole `stat` line: the command is at most 64 bytes (a kernel worker's name; a task's own is 16, `TASK_COMM_LEN`), and
    /// the 50-odd numbers after it at most 20 digits each.
    private static let statCapacity = 2_048

    /// The fields after the command's closing parenthesis (the command may hold spaces and parentheses): the state
    /// first, minflt the 8th, majflt the 10th, utime the 12th, stime the 13th (proc(5)).
    static func parse(_ stat: String) -> ProcessProgress? {
        var stat = stat
        return stat.withUTF8 { parse($0) }
    }

    /// `parse` over the line's bytes: fields are runs of anything but spaces.
    static func parse(_ stat: UnsafeBufferPointer<UInt8>) -> ProcessProgress? {
        guard let close = stat.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let space = UInt8(ascii: " ")
        var state: UInt8 = 0
        var numbers = (minor: UInt64(0), major: UInt64(0), user: UInt64(0), system: UInt64(0))
        var field = 0
        var index = close + 1
        while field <= 12 {
            while index < stat.count, stat[index] == space { index += 1 }
            guard index < stat.count else { return nil }
            let start = index
            while index < stat.count, stat[index] != space { index += 1 }
            switch field {
            case 0: state = index - start == 1 ? stat[start] : 0
            case 7, 9, 11, 12:
                guard let value = decimal(stat, start..<index) else { return nil }
                switch field {
                case 7: numbers.minor = value
                case 9: numbers.major = value
                case 11: numbers.user = value
                default: numbers.system = value
                }
            default: break
            }
            field += 1
        }
        return ProcessProgress(cpuTicks: numbers.user &+ numbers.system, faults: numbers.minor &+ numbers.major,
                               isBusy: state == UInt8(ascii: "R") || state == UInt8(ascii: "D"))
    }

    /// The unsigned decimal in `range`, as `UInt64(_:)` reads it (an optional `+`, digits only, no overflow).
    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt64? {
        var digits = range
        if bytes[digits.lowerBound] == UInt8(ascii: "+") { digits = digits.dropFirst() }
        guard !digits.isEmpty else { return nil }
        var value: UInt64 = 0
        for index in digits {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(UInt64(digit))
            guard !overflowTimes, !overflowSum else { return nil }
            value = sum
        }
        return value
    }

    /// How long a wait limited to `limit` goes on for a process still at work (`BusyLimit`).
    static func busyLimit(for limit: Int64) -> Int64 { BusyLimit.milliseconds(for: limit) }

    /// Whether the process worked since `earlier`: busy now, or it used CPU or took page faults in between.
    func worked(since earlier: ProcessProgress?) -> Bool {
        isBusy || (earlier.map { cpuTicks > $0.cpuTicks || faults > $0.faults } ?? false)
    }
}

/// Readings of supervised plugins' processes, by key (a session's or plugin's name, a request's correlation id), to
/// judge a limit on each in virtual time by its progress, so that the journal does not depend on the machine's load:
/// past the limit a process still at work (runnable, or using CPU since the last reading) is late, not stopped, and is
/// waited for up to the busy limit; one blocked with no CPU used, or ended, is past it. A reading taken early, or a
/// first look that only reads, gives even the first judgement a CPU time to compare with — a plugin that works in
/// short bursts is seldom caught runnable.
struct ProgressWatch<Key: Hashable> {
    private var readings: [Key: (pid: pid_t, progress: ProcessProgress)] = [:]
    private let reader: (pid_t) -> ProcessProgress?

    init(reader: @escaping (pid_t) -> ProcessProgress? = ProcessProgress.read) {
        self.reader = reader
    }

    /// A first reading of each process (by key), early in the wait.
    mutating func read(_ processes: [(Key, pid_t)]) {
        for (key, pid) in processes {
            readings[key] = reader(pid).map { (pid, $0) }
        }
    }

    /// Whether `key`'s process `pid` worked since the last reading of the same process (runnable now, or its CPU
    /// rose); this reading replaces it. False when the process cannot be read (it ended).
    mutating func isStillAtWork(_ key: Key, pid: pid_t) -> Bool {
        guard let now = reader(pid) else { return false }
        defer { readings[key] = (pid, now) }
        // An earlier process of the plugin (it was restarted) says nothing of this one.
        let earlier = readings[key].flatMap { $0.pid == pid ? $0.progress : nil }
        return now.worked(since: earlier)
    }

    /// Whether `key`'s process `pid` was read already (a first look has something to compare with).
    func hasReading(_ key: Key, pid: pid_t) -> Bool { readings[key]?.pid == pid }

    /// Whether to wait on for `key`'s process `pid`, `waited` ms into a wait limited to `limit` and past it: the first
    /// look at the process only reads it (and waits on, unless it cannot be read); each later one asks whether it
    /// worked since the last, and its reading is the next one's to compare with.
    mutating func waitsOn(_ key: Key, pid: pid_t, waited: Int64, limit: Int64) -> Bool {
        guard waited < ProcessProgress.busyLimit(for: limit) else {
            forget(key)
            return false
        }
        guard hasReading(key, pid: pid) else {
            read([(key, pid)])
            return hasReading(key, pid: pid)
        }
        return isStillAtWork(key, pid: pid)
    }

    mutating func forget(_ key: Key) { readings[key] = nil }

    /// Keeps the readings of `keys` only: the waits for the others ended, and the next wait starts afresh.
    mutating func keep(only keys: Set<Key>) {
        if readings.keys.contains(where: { !keys.contains($0) }) { readings = readings.filter { keys.contains($0.key) } }
    }

    /// The wait is over: the next one starts from fresh readings.
    mutating func waitEnded() {
        if !readings.isEmpty { readings.removeAll() }
    }
}

/// The readings of the lagging plugins' processes while time waits for their acknowledgements, by session name: one
/// taken early in the wait, then one at each look.
typealias LaggardReadings = ProgressWatch<String>
