import Foundation

/// Watches a running `shieldbus run` from outside, as a person with `top` and `tail -f` would: the peak memory of the
/// broker and of each plugin process (resident, and dirty: iOS's measure), and how far bus time has got in the
/// journal over wall time.
///
/// Reads /proc and the journal file on its own thread every `interval`; nothing is asked of the broker, so the
/// watching does not change what is measured (apart from the CPU it takes: well under 1%).
final class RunWatcher {
    /// One reading of the journal: at this wall time, bus time had reached this far.
    struct Progress {
        let wallNanoseconds: UInt64
        let busTimeMilliseconds: Int64
    }

    /// The CPU the run had used by a wall time: the broker's and that of every process below it, running or ended.
    struct CPUReading {
        let wallNanoseconds: UInt64
        let cpuSeconds: Double
    }

    private let brokerPID: pid_t
    private let journalPath: String
    private let interval: UInt64
    private let lock = NSLock()
    private var running = true
    private var worker: Worker?
    /// Peak RSS in KiB by process (the broker is "broker", plugins by executable name); a restarted plugin's
    /// processes share its name, and the largest peak is kept.
    private var peaks: [String: Int] = [:]
    /// Peak dirty footprint in KiB by process, named as `peaks`.
    private var dirtyPeaks: [String: Int] = [:]
    private var progress: [Progress] = []
    private var cpu: [CPUReading] = []
    /// The broker's CPU by thread (`BrokerThreads`), each thread's largest reading kept: libzmq's threads end before
    /// the process does (its context is closed first).
    private var brokerThreads = BrokerThreads()
    private var journalOffset: UInt64 = 0
    private var partialLine: [UInt8] = []
    private(set) var journalLines = 0

    init(brokerPID: pid_t, journalPath: String, intervalMilliseconds: UInt64 = 20) {
        self.brokerPID = brokerPID
        self.journalPath = journalPath
        interval = intervalMilliseconds * 1_000_000
    }

    func start() {
        worker = Worker("run-watcher") { [self] in
            var lastMemory: UInt64 = 0
            while lock.withLock({ running }) {
                let now = monotonicNanoseconds()
                readJournal(at: now)
                if now - lastMemory >= 200_000_000 { readMemory(); lastMemory = now }
                usleep(useconds_t(interval / 1000))  // the sampling period, not a wait for something
            }
        }
    }

    /// Stops watching after one last look at the journal (the process has ended by now).
    func stop() -> (peaks: [String: Int], dirtyPeaks: [String: Int], progress: [Progress], cpu: [CPUReading], brokerThreads: BrokerThreads?) {
        lock.withLock { running = false }
        try? worker?.join()
        readJournal(at: monotonicNanoseconds())
        return (peaks, dirtyPeaks, progress, cpu, brokerThreads.threads.isEmpty ? nil : brokerThreads)
    }

    /// The peak so far of the broker and of each child. VmHWM is the kernel's own peak for the process's whole
    /// life, so only growth in the last 200 ms before a process ends can be missed.
    /// The dirty footprint has no kernel peak; it is sampled, so a short spike between two readings can be missed.
    private func readMemory() {
        var readings: [(name: String, peak: Int, dirty: Int?)] = []
        if let broker = Self.peakKiB(brokerPID) { readings.append(("broker", broker, Self.dirtyKiB(brokerPID))) }
        // Every process below the broker: a plugin runs inside its sandbox (bwrap's child), and a launch from its
        // template is the template's child.
        let descendants = Self.descendants(of: brokerPID)
        for pid in descendants {
            guard let kib = Self.peakKiB(pid), let name = Self.executableName(pid) else { continue }
            readings.append((name, kib, Self.dirtyKiB(pid)))
        }
        // A process that ended moves from its own count to its parent's count of ended children, which every running
        // process's reading includes: the sum carries on, and nothing is counted twice.
        let ticks = (Self.cpuTicks(brokerPID, withEndedChildren: true) ?? 0)
            + descendants.compactMap { Self.cpuTicks($0, withEndedChildren: true) }.reduce(0, +)
        let reading = CPUReading(wallNanoseconds: monotonicNanoseconds(), cpuSeconds: Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK))))
        let threads = BrokerThreads.read(brokerPID)
        lock.withLock {
            cpu.append(reading)
            if let threads { brokerThreads.keepLargest(threads) }
            for reading in readings {
                peaks[reading.name] = max(peaks[reading.name] ?? 0, reading.peak)
                if let dirty = reading.dirty { dirtyPeaks[reading.name] = max(dirtyPeaks[reading.name] ?? 0, dirty) }
            }
        }
    }

    private func readJournal(at now: UInt64) {
        guard let handle = FileHandle(forReadingAtPath: journalPath) else { return }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: journalOffset)) != nil, let data = try? handle.readToEnd(), !data.isEmpty else { return }
        journalOffset += UInt64(data.count)
        var bytes = partialLine
        bytes.append(contentsOf: data)
        guard let lastNewline = bytes.lastIndex(of: 0x0A) else { partialLine = bytes; return }
        journalLines += bytes[...lastNewline].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        let lineStart = bytes[..<lastNewline].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        partialLine = Array(bytes[(lastNewline + 1)...])
        if let time = Self.busTime(inEnvelope: bytes[lineStart..<lastNewline]) {
            lock.withLock { progress.append(Progress(wallNanoseconds: now, busTimeMilliseconds: time)) }
        }
    }

    private static let timeKey = Array(#","time":"#.utf8)

    /// The `time` of a journaled envelope (`{"v":1,"seq":N,"time":T,…`, a fixed order).
    static func busTime(inEnvelope line: ArraySlice<UInt8>) -> Int64? {
        guard let keyStart = line.firstRange(of: timeKey) else { return nil }
        var value: Int64 = 0
        var index = keyStart.upperBound
        while index < line.endIndex, line[index] >= 0x30, line[index] <= 0x39 {
            value = value * 10 + Int64(line[index] - 0x30)
            index += 1
        }
        return index > keyStart.upperBound ? value : nil
    }

    /// VmHWM (peak resident set) of a process, in KiB.
    static func peakKiB(_ pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
    }

    /// A process's dirty footprint in KiB: the pages only it can hold in memory — its anonymous pages (heap, stacks,
    /// and pages of mapped files it wrote to, copied on write) and what was swapped out — from
    /// /proc/<pid>/smaps_rollup. This is what iOS's limit for an extension counts (the task's `phys_footprint`: dirty
    /// and compressed memory); pages mapped from files — the program's code, its libraries, most of the resident set
    /// here — are not counted. Not `Private_Dirty`: a program file freshly written by the build is still dirty in the
    /// page cache for a while, and its mapped pages would count as the process's own (16 MiB "dirty" for the monitor
    /// right after `make bench-build`, 2 MiB a minute later).
    static func dirtyKiB(_ pid: pid_t) -> Int? {
        guard let rollup = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return nil }
        var total = 0, found = false
        for line in rollup.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, ["Anonymous:", "Swap:"].contains(fields[0]), let kib = Int(fields[1]) else { continue }
            total += kib
            found = true
        }
        return found ? total : nil
    }

    /// A process's user and system CPU in clock ticks from /proc/<pid>/stat (`withEndedChildren`: and that of its
    /// children it has waited for).
    static func cpuTicks(_ pid: pid_t, withEndedChildren: Bool) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        // After "(comm)": state, ppid, … — utime, stime, cutime, cstime are the 14th to 17th fields of the line.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 14 else { return nil }
        return (11...(withEndedChildren ? 14 : 12)).compactMap { Int(fields[$0]) }.reduce(0, +)
    }

    /// The processes below `pid`, children first (one pass over /proc: this kernel has no
    /// /proc/<pid>/task/<pid>/children).
    static func descendants(of pid: pid_t) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var children: [pid_t: [pid_t]] = [:]
        for child in entries.compactMap({ pid_t($0) }) {
            // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after the last ')'.
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = pid_t(fields[1]) { children[parent, default: []].append(child) }
        }
        var found: [pid_t] = []
        var next = children[pid] ?? []
        while let process = next.popLast() {
            found.append(process)
            next += children[process] ?? []
        }
        return found
    }

    /// The file name of the program a process runs (argv[0]'s last component).
    static func executableName(_ pid: pid_t) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
              let first = data.split(separator: 0).first else { return nil }
        return String(decoding: first, as: UTF8.self).split(separator: "/").last.map(String.init)
    }
}

/// The broker process's CPU by thread: its loop (the main thread, which sequences, journals and commits — and, in
/// `shieldbus run`, also reads the configuration and scenario, prints the timeline and judges the journal), libzmq's
/// I/O threads, and any other. Read from each thread's `schedstat` (nanoseconds on a CPU): clock ticks are too coarse
/// for a loop that may take little CPU.
struct BrokerThreads {
    enum Kind { case loop, ioThread, other }
    /// Each thread's kind and the largest CPU time read for it (ns), by thread id.
    private(set) var threads: [Int: (kind: Kind, nanoseconds: UInt64)] = [:]

    var loopSeconds: Double { seconds(.loop) }
    var ioThreadsSeconds: Double { seconds(.ioThread) }

    private func seconds(_ kind: Kind) -> Double {
        Double(threads.values.filter { $0.kind == kind }.reduce(0) { $0 + $1.nanoseconds }) / 1e9
    }

    /// Keeps each thread's larger reading: a thread that ended keeps its last one.
    mutating func keepLargest(_ reading: BrokerThreads) {
        for (thread, value) in reading.threads where value.nanoseconds >= threads[thread]?.nanoseconds ?? 0 { threads[thread] = value }
    }

    /// Nil when the process is gone or no thread's `schedstat` can be read.
    static func read(_ pid: pid_t) -> BrokerThreads? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        var reading = BrokerThreads()
        for task in tasks {
            guard let thread = Int(task),
                  let schedstat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
                  let nanoseconds = schedstat.split(separator: " ").first.flatMap({ UInt64($0) }) else { continue }
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
            let kind: Kind = thread == Int(pid) ? .loop : name.hasPrefix("ZMQbg/IO") ? .ioThread : .other
            reading.threads[thread] = (kind, nanoseconds)
        }
        return reading.threads.isEmpty ? nil : reading
    }
}
