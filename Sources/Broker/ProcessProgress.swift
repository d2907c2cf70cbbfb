import BusClient
import Foundation

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

    /// The reading of `pid`, or nil when it cannot be read (the process ended).
    static func read(_ pid: pid_t) -> ProcessProgress? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return parse(text)
    }

    /// The fields after the command's closing parenthesis (the command may hold spaces and parentheses): the state
    /// first, minflt the 8th, majflt the 10th, utime the 12th, stime the 13th (proc(5)).
    static func parse(_ stat: String) -> ProcessProgress? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]),
              let minor = UInt64(fields[7]), let major = UInt64(fields[9]) else { return nil }
        return ProcessProgress(cpuTicks: user + system, faults: minor + major, isBusy: fields[0] == "R" || fields[0] == "D")
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
