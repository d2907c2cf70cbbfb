import Foundation

/// How busy the machine was with other work while the benchmark ran: every process's CPU (from /proc/stat)
/// minus this one's. The benchmark fills every core, so anything else running slows some runs and not others —
/// this is the first thing to look at when the spread is wide.
struct MachineLoad {
    /// Wall-clock seconds the measurement covered.
    let seconds: Double
    /// CPU-seconds spent by everything else on the machine.
    let othersCPUSeconds: Double
    /// CPU-seconds the hypervisor gave to other guests while we wanted them (a VM's "steal").
    let stealSeconds: Double
    let cores: Int

    /// Other work as a share of the machine's capacity over the measurement (0…1).
    var othersShare: Double { othersCPUSeconds / (seconds * Double(cores)) }

    /// A reading to subtract from a later one.
    struct Reading {
        let wall: UInt64
        let busyTicks: UInt64
        let stealTicks: UInt64
        let ownCPU: UInt64

        static func now() -> Reading {
            let fields = ((try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) ?? "")
                .split(separator: "\n").first { $0.hasPrefix("cpu ") }?
                .split(separator: " ").dropFirst().compactMap { UInt64($0) } ?? []
            // user nice system idle iowait irq softirq steal …: busy = user + nice + system + irq + softirq.
            let value = { (index: Int) in index < fields.count ? fields[index] : 0 }
            return Reading(wall: monotonicNanoseconds(), busyTicks: value(0) + value(1) + value(2) + value(5) + value(6),
                           stealTicks: value(7), ownCPU: (cpuNanoseconds(CLOCK_PROCESS_CPUTIME_ID) ?? 0) + childrenCPU())
        }
    }

    /// CPU used by the child processes this one has waited for (`shieldbus run`, its plugins, hyperfine's commands).
    private static func childrenCPU() -> UInt64 {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage) == 0 else { return 0 }
        let micro = { (time: timeval) in UInt64(time.tv_sec) * 1_000_000 + UInt64(time.tv_usec) }
        return (micro(usage.ru_utime) + micro(usage.ru_stime)) * 1000
    }

    init(from start: Reading, to end: Reading, cores: Int) {
        let ticksPerSecond = Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
        seconds = Double(end.wall - start.wall) / 1e9
        let allBusy = Double(end.busyTicks &- start.busyTicks) / ticksPerSecond
        othersCPUSeconds = max(0, allBusy - Double(end.ownCPU - start.ownCPU) / 1e9)
        stealSeconds = Double(end.stealTicks &- start.stealTicks) / ticksPerSecond
        self.cores = cores
    }
}
