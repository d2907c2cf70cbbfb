import BusProtocol
import Foundation

/// `shieldbus explore` as a user runs it: generated days of one product under one profile, two at a time per core,
/// each day its own broker and plugin processes — timed from outside, with the CPU of every process it started.
struct ExploreSpeedBench {
    struct Result {
        let product: String
        let profile: String
        let days: Int
        let events: Int
        let failures: Int
        let wallSeconds: Double
        /// User + system CPU of `shieldbus explore` and everything it started.
        let cpuSeconds: Double

        var daysPerSecond: Double { Double(days) / wallSeconds }
        /// The unit: a thousand days of one product.
        var thousandDaysSeconds: Double { wallSeconds * 1000 / Double(days) }
    }

    /// The products a user explores: every configuration with a product and its own lock invariant.
    static let products = ["habit-lock", "focus-window", "speed-bump"]
    /// The fidelity profiles, each with its own target (an `ios-realistic` day launches the monitor per event).
    static let profiles = ["faithful", "ios-realistic"]

    let installation: Installation
    let directory: String

    /// Plays `days` days of `product` under `profile` (seeds from 1, explore's default jobs — twice the cores —, no
    /// shrinking), as a user runs it.
    func measure(product: String, profile: String, days: Int, progress: (String) -> Void) throws -> Result {
        let folder = "\(directory)/explore-\(product)-\(profile)"
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: installation.program("shieldbus"))
        process.arguments = ["explore", "--config", "\(installation.config)/\(product).yml", "--days", String(max(days, 1)),
                             "--seed", "1", "--profile", profile, "--shrink-runs", "0",
                             "--failures-dir", folder + "/failures", "--json"]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        progress("explore \(product): \(days) days (\(profile), \(2 * ProcessInfo.processInfo.activeProcessorCount) at a time)…")
        let cpuBefore = Self.childrenCPUSeconds()
        let started = monotonicNanoseconds()
        try process.run()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        process.waitUntilExit()
        let wall = Double(monotonicNanoseconds() - started) / 1e9
        // 0: every day held; 3: a day failed — a finding about the product, shown beside the figure, not a bench failure.
        guard process.terminationStatus == 0 || process.terminationStatus == 3,
              let totalsLine = lines.last, let totals = try? JSONValue(parsing: Array(totalsLine.utf8)),
              let played = totals["days"]?.intValue, let events = totals["events"]?.intValue,
              let failures = totals["failures"]?.intValue else {
            throw BenchFailure("shieldbus explore \(product) exited with \(process.terminationStatus) without its totals line")
        }
        let result = Result(product: product, profile: profile, days: Int(played), events: Int(events), failures: Int(failures), wallSeconds: wall,
                            cpuSeconds: Self.childrenCPUSeconds() - cpuBefore)
        progress(String(format: "explore \(product) (\(profile)): %d days in %.1f s (%.2f days/s, %.2f CPU-s a day), %d failed",
                        result.days, wall, result.daysPerSecond, result.cpuSeconds / Double(max(result.days, 1)), result.failures))
        return result
    }

    /// User + system CPU of this process's waited-for descendants so far.
    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
