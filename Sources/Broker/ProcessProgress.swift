import Foundation

/// Whether a process is getting on with its work, read from `/proc/<pid>/stat`: its scheduler state and the CPU it has
/// used. The wait for a plugin's acknowledgements asks this before giving the plugin up, so that a machine too busy to
/// run a plugin in time (it is runnable, or its CPU time rises) is not taken for a plugin that stopped (blocked, idle).
struct ProcessProgress: Equatable {
    /// Clock ticks of CPU, user and system.
    let cpuTicks: UInt64
    /// Running or waiting for a CPU (`R`), or in an uninterruptible wait, mostly the disk (`D`).
    let isBusy: Bool

    /// The reading of `pid`, or nil when it cannot be read (the process ended).
    static func read(_ pid: pid_t) -> ProcessProgress? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return parse(text)
    }

    /// The fields after the command's closing parenthesis (the command may hold spaces and parentheses): the state
    /// first, utime the 12th, stime the 13th (proc(5)).
    static func parse(_ stat: String) -> ProcessProgress? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return ProcessProgress(cpuTicks: user + system, isBusy: fields[0] == "R" || fields[0] == "D")
    }

    /// How long a wait limited to `limit` goes on for a process still at work: twelve times the limit or a minute,
    /// whichever is longer — a machine busy with other work runs it late; one that never gets on is stopped.
    static func busyLimit(for limit: Int64) -> Int64 { max(limit * 12, 60_000) }

    /// Whether the process worked since `earlier`: busy now, or it used CPU in between.
    func worked(since earlier: ProcessProgress?) -> Bool {
        isBusy || (earlier.map { cpuTicks > $0.cpuTicks } ?? false)
    }
}

/// The readings of the lagging plugins' processes while time waits for their acknowledgements, by session name: one
/// taken early in the wait, then one at each look, so that even the first look compares the CPU used — a plugin that
/// works in short bursts is seldom caught runnable, and without an earlier reading would be given up on at once.
struct LaggardReadings {
    private var readings: [String: (pid: pid_t, progress: ProcessProgress)] = [:]
    private let reader: (pid_t) -> ProcessProgress?

    init(reader: @escaping (pid_t) -> ProcessProgress? = ProcessProgress.read) {
        self.reader = reader
    }

    /// A first reading of each lagging process (by session name), early in the wait.
    mutating func read(_ laggards: [(String, pid_t)]) {
        for (name, pid) in laggards {
            readings[name] = reader(pid).map { (pid, $0) }
        }
    }

    /// Whether `name`'s process `pid` worked since the last reading of the same process (runnable now, or its CPU
    /// rose); this reading replaces it. False when the process cannot be read (it ended).
    mutating func isStillAtWork(_ name: String, pid: pid_t) -> Bool {
        guard let now = reader(pid) else { return false }
        defer { readings[name] = (pid, now) }
        // An earlier process of the plugin (it was restarted) says nothing of this one.
        let earlier = readings[name].flatMap { $0.pid == pid ? $0.progress : nil }
        return now.worked(since: earlier)
    }

    /// Whether `name`'s process `pid` was read already (a first look has something to compare with).
    func hasReading(_ name: String, pid: pid_t) -> Bool { readings[name]?.pid == pid }

    mutating func forget(_ name: String) { readings[name] = nil }

    /// The wait is over: the next one starts from fresh readings.
    mutating func waitEnded() {
        if !readings.isEmpty { readings.removeAll() }
    }
}
