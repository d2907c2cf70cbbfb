import CProcessControl
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Explore's end of the broker template (`shieldbus broker-template`, broker_template.c): one process per explore worker,
/// executed once, that forks each day's `shieldbus run` instead of executing it — the loader, relocations,
/// ArgumentParser, the configuration's and catalog's YAML and the runtime's first uses paid once per worker, not per day.
///
/// The template is started at its worker's first day; with a worker folder it keeps the worker's plugin sandboxes
/// (`ready kept`), and its days are played in that folder. Each day sends its arguments with two descriptors: the day's standard
/// error, and one end of a socket of its own on which the template answers — `started <pid>` with a pidfd on the day's
/// process (registered in `DayLaunches`, so that a stopping explore signals it), then `ended <pid> <wait status>`. The
/// template is the day's parent and reaps it; the pidfd names that process whoever gets its pid later.
///
/// A template that cannot start, does not say `ready` within `readyTimeout`, or ends while it serves is said once on
/// standard error, and every day of its worker from then on is executed (`DayRunner`); a day it was playing when it ended is played
/// again by exec from the start (its process dies with the template). `SHIELDBUS_PLAIN_DAYS=1` executes every day.
final class BrokerTemplate: Sendable {
    /// What became of a day sent to the template.
    enum Play: Equatable {
        /// The day's process ended: its exit status, or the number of the signal that ended it (as Foundation's
        /// `Process.terminationStatus` tells).
        case ended(Int32)
        /// The template did not play the day (it is gone, or refused the request): play it by exec.
        case notPlayed
    }

    /// The environment variable that makes explore execute every day.
    static let plainDaysVariable = "SHIELDBUS_PLAIN_DAYS"
    static let readyTimeout: TimeInterval = 30

    private struct State {
        enum Phase { case notStarted, serving, gone }
        var phase = Phase.notStarted
        var pid: pid_t = 0
        var channel: Int32 = -1
        var keeps = false
    }

    private let executable: String
    private let configurationPath: String
    /// The folder of the worker whose days it plays, where it keeps their plugins' sandboxes (nil: it keeps none).
    let worker: WorkerFolder?
    /// The processor it and everything it starts are held on (`WorkerCores`); nil: where the scheduler puts them.
    let core: Int32?
    private let state = Mutex(State())

    init(executable: String, configurationPath: String, worker: WorkerFolder? = nil, core: Int32? = nil) {
        self.executable = executable
        self.configurationPath = configurationPath
        self.worker = worker
        self.core = core
    }

    /// The template's process while it serves (tests read its placement); nil otherwise.
    var servingProcess: pid_t? {
        state.withLock { $0.phase == .serving ? $0.pid : nil }
    }

    /// Whether it serves and keeps its worker's sandboxes (it said `ready kept`): its days are then played in the
    /// worker's folder, on its endpoint. Starts it when it has not started.
    var keepsSandboxes: Bool {
        state.withLock { state in serving(&state) && state.keeps }
    }

    static func isWanted(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        environment[plainDaysVariable] != "1"
    }

    /// Plays `arguments` (`run …`) as a child of the template, its standard error `errors`; `launches` hears its
    /// process. `day` says which day it is (`the day of seed 7`), for the day's own errors: the child reads
    /// `run`'s arguments itself, and a mistake there is explore's, not something the person ran. Returns once it
    /// ended, or at once when the template is gone.
    func play(_ arguments: [String], day: String, errors: Int32, launches: DayLaunches) -> Play {
        var pair: [Int32] = [-1, -1]
        guard shieldbus_message_pair(&pair) == 0 else { return .notPlayed }
        let reply = pair[0]
        defer { close(reply) }
        let request = Array("play\n".utf8) + Array(([day] + arguments).joined(separator: "\0").utf8)
        let passed = [pair[1], errors]
        // Sent under the lock: `stop` closes the channel under it, so a send never reaches a descriptor reused since.
        let sent = state.withLock { state -> Int? in
            guard serving(&state) else { return nil }
            let count = request.withUnsafeBytes { shieldbus_send_with_descriptors(state.channel, $0.baseAddress, UInt(request.count), passed, 2) }
            return count == request.count ? count : -Int(errno)
        }
        close(pair[1])  // the template has its copy: a template gone leaves none, so the reply socket ends
        guard let sent else { return .notPlayed }
        guard sent > 0 else { return ended(because: "explore cannot write to it (\(String(cString: strerror(Int32(-sent)))))") }
        var started: pid_t?
        while true {
            var buffer = [UInt8](repeating: 0, count: 128)
            var descriptor: Int32 = -1
            let length = buffer.withUnsafeMutableBytes { shieldbus_receive_with_descriptor(reply, $0.baseAddress, UInt($0.count), &descriptor) }
            guard length > 0 else {
                if let started { launches.exited(started) }
                return ended(because: length == 0 ? "it ended" : "its answer cannot be read (\(String(cString: strerror(errno))))")
            }
            let words = String(decoding: buffer[..<length], as: UTF8.self).split(separator: " ")
            switch (words.first, words.count > 1 ? Int32(words[1]) : nil) {
            case ("started", let pid?):
                started = pid
                launches.started(pid, descriptor: descriptor)
            case ("ended", let pid?) where words.count == 3:
                if descriptor >= 0 { close(descriptor) }
                launches.exited(pid)
                return .ended(Self.terminationStatus(waitStatus: Int32(words[2]) ?? 0))
            default:
                // `failed <errno>`: this day was not started (the template goes on serving).
                if descriptor >= 0 { close(descriptor) }
                return .notPlayed
            }
        }
    }

    /// Ends the template: closes its channel (it serves no more and exits) and reaps it, killing it after `timeout`.
    /// The days it forked must have ended (`DayLaunches.stopAll`).
    func stop(timeout: TimeInterval = 5) {
        let (pid, channel) = state.withLock { state -> (pid_t, Int32) in
            defer { (state.phase, state.pid, state.channel) = (.gone, 0, -1) }
            return (state.pid, state.channel)
        }
        if channel >= 0 { close(channel) }
        guard pid > 0 else { return }
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            guard Date() < deadline else {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return
            }
            usleep(2_000)
        }
    }

    deinit { stop() }

    /// Whether the template serves; it is started at the first call.
    private func serving(_ state: inout State) -> Bool {
        if state.phase == .notStarted { start(&state) }
        return state.phase == .serving
    }

    private func start(_ state: inout State) {
        state.phase = .gone
        var pair: [Int32] = [-1, -1]
        guard shieldbus_message_pair(&pair) == 0 else { return say("cannot start: \(String(cString: strerror(errno)))") }
        let arguments = [executable, "broker-template", "--config", configurationPath] + (worker.map { ["--worker-dir", $0.path] } ?? [])
        var pointers = arguments.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        var pid: pid_t = 0
        var notHeld: Int32 = 0
        let failure = shieldbus_spawn_with_channel(executable, &pointers, pair[1], core ?? -1, &pid, &notHeld)
        close(pair[1])
        if failure == 0, notHeld != 0, let core {
            FileHandle.standardError.write(Data("explore: \(whose) cannot be held on processor \(core) (\(String(cString: strerror(notHeld)))); its days run where the scheduler puts them\n".utf8))
        }
        guard failure == 0 else {
            close(pair[0])
            return say("cannot start \(executable): \(String(cString: strerror(failure)))")
        }
        (state.pid, state.channel) = (pid, pair[0])
        // The template says `ready` once it has read the configuration and warmed up (`ready kept` once its worker's
        // sandboxes serve too); nothing else comes this way.
        var ready = pollfd(fd: pair[0], events: Int16(POLLIN), revents: 0)
        var buffer = [UInt8](repeating: 0, count: 16)
        var sender: Int32 = 0
        let answered = poll(&ready, 1, Int32(Self.readyTimeout * 1000)) == 1
        let length = answered ? buffer.withUnsafeMutableBytes { shieldbus_receive_from(pair[0], $0.baseAddress, UInt($0.count), &sender, 0) } : -1
        let said = length > 0 ? String(decoding: buffer[..<length], as: UTF8.self) : ""
        guard said == "ready" || said == "ready kept" else {
            close(pair[0])
            (state.pid, state.channel) = (0, -1)
            return say(answered ? "ended before it served (\(reap(pid)))" : "did not start within \(Int(Self.readyTimeout)) s (\(reap(pid)))")
        }
        state.phase = .serving
        state.keeps = said == "ready kept"
    }

    /// The template is gone (or cannot be reached): no day is sent to it again.
    private func ended(because reason: String) -> Play {
        let pid = state.withLock { state -> pid_t? in
            guard state.phase == .serving else { return nil }
            defer { (state.phase, state.pid) = (.gone, 0) }
            return state.pid
        }
        if let pid { say("\(reason) (\(reap(pid)))") }
        return .notPlayed
    }

    /// Ends the template (it is gone already, or given up on) and says how it ended.
    private func reap(_ pid: pid_t) -> String {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        guard waitpid(pid, &status, 0) == pid else { return "its status is unknown" }
        let code = Self.terminationStatus(waitStatus: status)
        return status & 0x7f == 0 ? "exit status \(code)" : "killed by signal \(code)"
    }

    private var whose: String {
        worker.map { "the broker template of \(($0.path as NSString).lastPathComponent)" } ?? "the broker template"
    }

    private func say(_ what: String) {
        FileHandle.standardError.write(Data("explore: \(whose) \(what); its days are played by exec from now on\n".utf8))
    }

    /// A wait status as `Process.terminationStatus` gives it: the exit status, or the signal's number.
    static func terminationStatus(waitStatus status: Int32) -> Int32 {
        status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }
}

/// Explore's broker templates, one per worker (each plays one day at a time): each keeps the sandboxes of its
/// worker's plugins across the days it plays (`KeptLaunchTemplates`), in a folder of its own in the explore's.
final class BrokerTemplates: Sendable {
    private struct State {
        var idle: [BrokerTemplate] = []
        var all: [BrokerTemplate] = []
    }

    private let executable: String
    private let configurationPath: String
    private let workDirectory: String
    private let cores: WorkerCores
    private let state = Mutex(State())

    init(executable: String, configurationPath: String, workDirectory: String, cores: WorkerCores = .none) {
        self.executable = executable
        self.configurationPath = configurationPath
        self.workDirectory = workDirectory
        self.cores = cores
    }

    /// A template no day is playing on, made (not yet started) when every one is.
    func take() -> BrokerTemplate {
        state.withLock { state in
            if let template = state.idle.popLast() { return template }
            let worker = WorkerFolder(path: workDirectory + "/worker-\(state.all.count + 1)")
            let template = BrokerTemplate(executable: executable, configurationPath: configurationPath, worker: worker,
                                          core: cores.core(ofWorker: state.all.count))
            state.all.append(template)
            return template
        }
    }

    func give(_ template: BrokerTemplate) {
        state.withLock { $0.idle.append(template) }
    }

    /// Ends every template (the days they forked must have ended).
    func stopAll() {
        for template in state.withLock({ $0.all }) { template.stop() }
    }
}
