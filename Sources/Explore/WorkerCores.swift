import CProcessControl
import Foundation

/// The processor each explore worker is held on. A virtual-time day is a chain of turns, each a wake-up of another
/// process and of libzmq's I/O threads on both sides; kept on one processor, none of them crosses to another
/// processor's run queue or migrates (benchmarks.md, "Explore and launches"). Worker i (counted from 0)
/// is held on the i-th processor this process may run on, modulo how many there are: under a cpuset or `taskset` they
/// need not be the machine's first. Its broker template is started there, and everything it starts — its kept
/// sandboxes and launch templates, each day's broker and plugins, their threads — inherits the placement.
/// `SHIELDBUS_NO_PIN=1` or `explore --no-pin` leaves them to the scheduler. Only explore's forked days are held:
/// a day executed (`SHIELDBUS_PLAIN_DAYS=1`, or after its template failed) and `shieldbus run` are not.
public struct WorkerCores: Sendable, Equatable {
    /// The environment variable that leaves explore's workers to the scheduler.
    public static let noPinVariable = "SHIELDBUS_NO_PIN"

    /// The processors workers are held on, in order; empty: none is held.
    public let cores: [Int32]

    public init(cores: [Int32]) {
        self.cores = cores
    }

    /// No worker held.
    public static let none = WorkerCores(cores: [])

    /// The processors this process may run on, each worker held on one of them; none when `wanted` is false (nil:
    /// unless `SHIELDBUS_NO_PIN=1`), or when they cannot be read.
    public static func allowed(wanted: Bool? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) -> WorkerCores {
        guard wanted ?? (environment[noPinVariable] != "1") else { return .none }
        var cores = [Int32](repeating: -1, count: 1024)
        let count = shieldbus_allowed_cores(&cores, Int32(cores.count))
        guard count > 0 else {
            // Said, not passed over: the days still run, but not where `--no-pin`'s absence promised.
            let reason = count < 0 ? String(cString: strerror(errno)) : "none listed"
            FileHandle.standardError.write(Data("shieldbus explore: cannot read the processors this process may run on (\(reason)); its workers are left to the scheduler\n".utf8))
            return .none
        }
        return WorkerCores(cores: Array(cores[..<Int(count)]))
    }

    /// The processor worker `index` (counted from 0) is held on; nil: it is left to the scheduler.
    public func core(ofWorker index: Int) -> Int32? {
        cores.isEmpty ? nil : cores[index % cores.count]
    }
}
