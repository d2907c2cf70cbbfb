// shieldbus-report-bench: `shieldbus report` end to end (process start, store read or a running broker, rendering) over a generated year of stored days.

import AppGroupStore
import Foundation
import UsageReports

/// Writes a line to standard error (progress and failures; standard output holds only the results).
func note(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// A year of a heavy user's days, as the report builder stores them: about 14 apps, 4 domains, pickups, notifications,
/// shields and grace passes every day (random: the timings do not depend on the exact numbers).
struct GeneratedYear {
    static let apps = [("Instagram", "Social"), ("TikTok", "Social"), ("WhatsApp", "Social"), ("YouTube", "Entertainment"),
                       ("Netflix", "Entertainment"), ("Spotify", "Entertainment"), ("Slack", "Productivity & Finance"),
                       ("Notion", "Productivity & Finance"), ("Gmail", "Productivity & Finance"), ("Duolingo", "Education"),
                       ("Maps", "Travel"), ("Strava", "Health & Fitness"), ("Candy Crush", "Games"), ("Uber Eats", "Shopping & Food")]
    static let domains = ["reddit.com", "github.com", "wikipedia.org", "news.example"]
    private func next(_ bound: Int) -> Int { Int.random(in: 0..<bound) }

    func days(endingOn last: LocalDay, count: Int, zone: TimeZone) throws -> [DayUsage] {
        var ledger = UsageLedger(timeZone: zone)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        for offset in 0..<count {
            let day = last.adding(days: -offset)
            guard let morning = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day, hour: 7)) else { continue }
            for _ in 0..<(20 + next(15)) {
                let (app, category) = Self.apps[next(Self.apps.count)]
                let start = morning + TimeInterval(next(16 * 3600))
                try ledger.ingest(.appUsage(app: app, category: category, start: start, end: start + TimeInterval(60 + next(1800))))
                if next(3) == 0 { try ledger.ingest(.pickup(app: app, at: start)) }
                if next(2) == 0 { try ledger.ingest(.notification(source: app, at: start)) }
                if next(9) == 0 { try ledger.ingest(.shieldEncounter(target: app, at: start)) }
            }
            for _ in 0..<next(6) {
                let start = morning + TimeInterval(next(15 * 3600))
                try ledger.ingest(.webUsage(domain: Self.domains[next(Self.domains.count)], start: start, end: start + 600, isPrivate: false))
            }
            try ledger.ingest(.gracePassUsed(at: morning + 3600))
        }
        return ledger.days
    }
}

/// The processor time (user + system) of the finished children so far, in milliseconds.
func childrenCPUMilliseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    let seconds = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
    return seconds * 1000
}

/// Runs `shieldbus` with `arguments`: how long it took and the processor time it used, in milliseconds; fails unless
/// it exits with 0. On a busy machine the wall time waits for other processes, the processor time does not.
/// Spawned and reaped directly (posix_spawn, waitpid): Foundation's `Process.waitUntilExit` notices an exit only
/// at its run loop's next turn, which put a floor of ~51 ms under every wall time (even `--help`, 11 ms by hyperfine).
func timedRun(_ shieldbus: URL, _ arguments: [String]) throws -> (wall: Double, cpu: Double) {
    let cpuBefore = childrenCPUMilliseconds()
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([shieldbus.path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let start = DispatchTime.now().uptimeNanoseconds
    let spawned = posix_spawn(&pid, shieldbus.path, &actions, nil, argv, environ)
    var status: Int32 = 0
    while spawned == 0, waitpid(pid, &status, 0) == -1, errno == EINTR {}
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
    // Exited normally (no signal) with status 0.
    guard spawned == 0, status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
        throw NSError(domain: "shieldbus-report-bench", code: Int(spawned == 0 ? status : spawned),
                      userInfo: [NSLocalizedDescriptionKey: "shieldbus \(arguments.joined(separator: " ")) failed (spawn \(spawned), wait status \(status))"])
    }
    return (elapsed, childrenCPUMilliseconds() - cpuBefore)
}

/// `shieldbus run` on the bench's store: a broker whose report builder (retention 400 days) holds the generated year,
/// so that the same reports can be asked of it (`--runtime-dir`). Ready once it answers a report.
func startBroker(_ shieldbus: URL, folder: URL) throws -> (process: Process, runtime: String) {
    let catalog = FileManager.default.currentDirectoryPath + "/Config/catalog.yml"
    guard FileManager.default.fileExists(atPath: catalog) else {
        throw NSError(domain: "shieldbus-report-bench", code: 2, userInfo: [NSLocalizedDescriptionKey: "run it from the repository (no \(catalog))"])
    }
    let configuration = folder.appendingPathComponent("broker.yml"), runtime = folder.appendingPathComponent("run").path
    try """
    name: report-bench
    timeZone: Europe/Berlin
    catalog: \(catalog)
    appGroups:
      - {name: group.bench.reports, slices: {reports: ["reports.*"]}}
    plugins:
      - {name: reports, executable: report-builder, role: report, options: {appGroup: group.bench.reports, retentionDays: 400}}
    """.write(to: configuration, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = shieldbus
    process.arguments = ["run", "--config", configuration.path, "--no-scenario", "--quiet", "--runtime-dir", runtime,
                         "--state-dir", folder.appendingPathComponent("state").path]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let deadline = Date() + 60
    while (try? timedRun(shieldbus, ["report", "daily", "--json", "--runtime-dir", runtime])) == nil {
        guard Date() < deadline, process.isRunning else {
            process.terminate()
            throw NSError(domain: "shieldbus-report-bench", code: 1, userInfo: [NSLocalizedDescriptionKey: "the broker's report builder never answered"])
        }
    }
    return (process, runtime)
}

func benchmark() -> Int32 {
    let runs = Int(ProcessInfo.processInfo.environment["REPORT_BENCH_RUNS"] ?? "") ?? 15
    let aimMilliseconds = 50.0
    let shieldbus = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("shieldbus")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shieldbus-report-bench-\(getpid())")
    defer { if ProcessInfo.processInfo.environment["REPORT_BENCH_KEEP"] == nil { try? FileManager.default.removeItem(at: folder) } }
    do {
        guard FileManager.default.isExecutableFile(atPath: shieldbus.path) else {
            note("shieldbus-report-bench: \(shieldbus.path) is missing; build it with `swift build -c release --product shieldbus`")
            return 2
        }
        let zone = TimeZone(identifier: "Europe/Berlin")!
        let last = LocalDay(year: 2026, month: 11, day: 29)!
        let days = try GeneratedYear().days(endingOn: last, count: 366, zone: zone)
        let container = AppGroupContainer(root: folder.appendingPathComponent("state/appgroups"))
        try container.createGroup("group.bench.reports")
        let defaults = try SharedDefaults(suiteName: "group.bench.reports", container: container, writer: SharedDefaults.administrator)
        try defaults.transaction { store in
            // As the report builder leaves them: the days, and a roll-up of each month whose days it finished (every
            // month but the last day's, where today is still being written).
            var months: [LocalMonth: [(usage: DayUsage, version: Int64)]] = [:]
            for usage in days {
                let version = try store.set(usage, forKey: StoredDayKey.key(usage.day)).version
                months[LocalMonth(containing: usage.day), default: []].append((usage, version))
            }
            for (month, stored) in months where month != LocalMonth(containing: last) {
                _ = try store.set(MonthRollup(month: month, timeZoneIdentifier: zone.identifier, days: stored), forKey: StoredDayKey.key(month))
            }
        }
        note("shieldbus-report-bench: \(days.count) stored days and their monthly roll-ups in \(folder.path); \(runs) runs of each report")
        let state = ["--state-dir", folder.appendingPathComponent("state").path]
        let year = ["range", "--from", "\(last.adding(days: -365))", "--to", "\(last)"]
        var cases: [(String, [String])] = [
            ("process start (--help)", ["report", "--help"]),
            ("daily --json", ["report", "daily", "--date", "\(last)", "--json"] + state),
            ("weekly --json", ["report", "weekly", "--date", "\(last)", "--json"] + state),
            ("monthly --json", ["report", "monthly", "--month", "2026-11", "--json"] + state),
            ("monthly (table)", ["report", "monthly", "--month", "2026-11"] + state),
            ("range, the year --json", ["report"] + year + ["--json"] + state),
            ("range, the year --html", ["report"] + year + ["--html", folder.appendingPathComponent("year.html").path] + state),
        ]
        let broker = try startBroker(shieldbus, folder: folder)
        defer { broker.process.terminate(); broker.process.waitUntilExit() }
        let asked = ["--runtime-dir", broker.runtime]
        cases += [
            ("broker: daily --json", ["report", "daily", "--date", "\(last)", "--json"] + asked),
            ("broker: monthly --json", ["report", "monthly", "--month", "2026-11", "--json"] + asked),
            ("broker: the year --json", ["report"] + year + ["--json"] + asked),
        ]
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first ?? "?"
        print("report                     wall median   wall max   cpu median   (ms; aim: wall < \(Int(aimMilliseconds)) ms, release build, end to end; load average \(load))")
        print("(cpu: the command's own processor time; a broker's and its report builder's are not in it)")
        var met = true
        for (name, arguments) in cases {
            _ = try timedRun(shieldbus, arguments)  // warm the file cache
            let timings = try (0..<runs).map { _ in try timedRun(shieldbus, arguments) }
            let wall = timings.map(\.wall).sorted(), cpu = timings.map(\.cpu).sorted()
            let median = wall[wall.count / 2]
            met = met && median < aimMilliseconds
            print(name.padding(toLength: 26, withPad: " ", startingAt: 0)
                  + String(format: " %11.1f %10.1f %12.1f", median, wall[wall.count - 1], cpu[cpu.count / 2])
                  + (median < aimMilliseconds ? "" : "   over the aim"))
        }
        return met ? 0 : 1
    } catch {
        note("shieldbus-report-bench: \(error)")
        return 1
    }
}

exit(benchmark())
