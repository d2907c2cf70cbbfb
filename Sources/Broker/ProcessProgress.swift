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

    /// Whether the process worked since `earlier`: busy now, or it used CPU in between.
    func worked(since earlier: ProcessProgress?) -> Bool {
        isBusy || (earlier.map { cpuTicks > $0.cpuTicks } ?? false)
    }
}
