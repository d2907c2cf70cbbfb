import Foundation

/// The CPU (user + system) of a process and everything below it, by program: read before and after a stretch of work,
/// it says what the stretch cost every process of a live run — which other work on the machine moves far less than
/// the stretch's wall time.
struct ProcessTreeCPU {
    /// Clock ticks by process, with the program each runs.
    var processes: [pid_t: (program: String, ticks: Int)] = [:]

    /// A reading of `root` and its descendants (a process gone between the listing and its reading is left out).
    static func read(root: pid_t) -> ProcessTreeCPU {
        var reading = ProcessTreeCPU()
        for pid in [root] + RunWatcher.descendants(of: root) {
            guard let ticks = RunWatcher.cpuTicks(pid, withEndedChildren: false) else { continue }
            reading.processes[pid] = (RunWatcher.executableName(pid) ?? "?", ticks)
        }
        return reading
    }

    /// Seconds of CPU by program between `earlier` and this reading, for the processes alive at both.
    func secondsByProgram(since earlier: ProcessTreeCPU) -> [String: Double] {
        let perSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        var seconds: [String: Double] = [:]
        for (pid, now) in processes {
            guard let before = earlier.processes[pid], before.program == now.program else { continue }
            seconds[now.program, default: 0] += Double(now.ticks - before.ticks) / perSecond
        }
        return seconds
    }
}
