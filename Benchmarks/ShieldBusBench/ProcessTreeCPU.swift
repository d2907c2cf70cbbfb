import Foundation

/// The CPU (user + system) of a process and everything below it, by program: read before and after a stretch of work,
/// it says what the stretch cost every process of a live run — which other work on the machine moves far less than
/// the stretch's wall time.
struct ProcessTreeCPU {
    /// A process, as long as it lives: its number, and when it started (a number reused later starts later).
    struct Process: Hashable {
        let pid: pid_t
        let startTicks: Int
    }

    /// Clock ticks by process, with the program each runs.
    var processes: [Process: (program: String, ticks: Int)] = [:]

    /// What the processes of the stretch spent: seconds by program, for the processes alive at both readings; and how
    /// many processes were in one reading only (started or ended within the stretch: a restart, a crash, a launch),
    /// whose CPU is not in the seconds.
    struct Spent {
        var secondsByProgram: [String: Double] = [:]
        var inOneReadingOnly = 0
    }

    /// A reading of `root` and its descendants (a process gone between the listing and its reading is left out).
    static func read(root: pid_t) -> ProcessTreeCPU {
        var reading = ProcessTreeCPU()
        for pid in [root] + RunWatcher.descendants(of: root) {
            guard let ticks = RunWatcher.cpuTicks(pid, withEndedChildren: false), let started = startTicks(pid) else { continue }
            reading.processes[Process(pid: pid, startTicks: started)] = (RunWatcher.executableName(pid) ?? "?", ticks)
        }
        return reading
    }

    /// What was spent between `earlier` and this reading.
    func spent(since earlier: ProcessTreeCPU) -> Spent {
        let perSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        var spent = Spent()
        for (process, now) in processes {
            guard let before = earlier.processes[process] else { spent.inOneReadingOnly += 1; continue }
            spent.secondsByProgram[now.program, default: 0] += Double(now.ticks - before.ticks) / perSecond
        }
        spent.inOneReadingOnly += earlier.processes.keys.filter { processes[$0] == nil }.count
        return spent
    }

    /// When `pid` started, in clock ticks after boot: the 22nd field of /proc/<pid>/stat.
    static func startTicks(_ pid: pid_t) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        // After "(comm)": state is the 3rd field of the line, so the 22nd is the 19th after it (index 19).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? Int(fields[19]) : nil
    }
}
