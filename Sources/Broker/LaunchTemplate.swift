// LaunchTemplate: a plugin's template process (Android's zygote), from which its launches are forked rather than executed.
import BusClient
import CProcessControl
import Foundation

/// One plugin's template process: its executable started once, inside the plugin's sandbox, and held before its
/// `main` by the SDK (`CLaunchTemplate`), before the program has made any state, thread or libzmq context. Each
/// launch is a fork of it that goes on to `main` with the launch's environment — a fresh process with fresh memory,
/// in the same sandbox, without paying exec, the dynamic loader and relocations again. The broker talks to it on a
/// Unix datagram channel (the messages are described in `launch_template.c`); the kernel tells the broker each
/// message's sender as the broker's pid namespace numbers it, so a launch's pid (to signal it) comes from the launch
/// itself, and can only be a process inside the sandbox.
final class LaunchTemplate {
    /// The process the broker started and waits for (bwrap).
    let pid: pid_t
    private var channel: Int32
    /// It said it serves.
    private(set) var isReady = false
    /// The template's own pid outside the sandbox (the sender of `ready`), or 0 before it said it.
    private var templateProcess: Int32 = 0
    /// Its channel closed (it ended, or the broker retired it).
    private(set) var isGone = false
    /// Ended launches read from the channel and not yet taken: their pid inside the sandbox, and their wait status.
    private var endings: [(templatePID: pid_t, status: Int32)] = []
    /// Launches that said they started: their pid inside the sandbox and outside it.
    private var started: [(templatePID: pid_t, pid: pid_t)] = []
    private var forkFailed = false
    private var resetAsked = false
    private var wasReset = false
    /// A process descriptor on the template (a kept one is not a day's child, so its pid alone could name another
    /// process once its parent has reaped it; and a run's own may be reaped by the supervisor's wait for any child),
    /// or -1 when none could be opened.
    private let processDescriptor: Int32
    /// Something the supervisor's reaping must take was read or happened outside it (an ending read while a launch
    /// waited for its start, the channel closed): the loop's wake-up, which tells only of unread messages, missed it.
    private(set) var hasNews = false
    private var buffer = [UInt8](repeating: 0, count: 256)

    static let channelVariable = "SHIELDBUS_LAUNCH_CHANNEL"
    /// Set for a template kept across explored days: it notes what its sandbox holds before its first launch, and
    /// takes `reset`.
    static let keptVariable = "SHIELDBUS_LAUNCH_TEMPLATE_KEPT"

    /// The Swift runtime reads its own variables once, as the program's images are registered before any constructor
    /// runs: every launch of a template runs with the template's. Unless told where its crash backtracer
    /// (`swift-backtrace`) is, the runtime looks beside itself before `main`, learning where it was loaded from by
    /// `dladdr` — a scan of the program's whole dynamic symbol table, at every launch. Beside a release program (its
    /// build folder) there is none, and a sandbox shows no toolchain's `libexec`: the runtime would find none and leave
    /// backtracing off, so a sandboxed template tells it so at once, unless the plugin's environment sets the variable.
    static let backtraceVariable = "SWIFT_BACKTRACE"
    static let noBacktracer = "enable=no,swift-backtrace="
    /// The dynamic loader binds every symbol the program calls in its shared libraries (the C library's, mostly) when
    /// it starts, not at each first call: done once in the template, which every launch's memory then holds, rather
    /// than in every launch (a look-up per symbol, and a write to the program's table of them, copied per launch).
    static let bindNowVariable = "LD_BIND_NOW"

    /// The template's own environment: the plugin's, its channel, and what the loader and the runtime are told before `main`.
    static func environment(_ plugin: [String: String], sandboxed: Bool, kept: Bool) -> [String: String] {
        var environment = plugin
        environment[channelVariable] = String(ChildProcess.launchChannelDescriptor)
        if kept { environment[keptVariable] = "1" }
        if sandboxed, environment[backtraceVariable] == nil { environment[backtraceVariable] = noBacktracer }
        if environment[bindNowVariable] == nil { environment[bindNowVariable] = "1" }
        return environment
    }

    /// Closes each template's channel (it ends its sandbox) and reaps it, killing one that has not ended within
    /// `graceMilliseconds`.
    static func end(_ templates: [LaunchTemplate], graceMilliseconds: Int64) {
        for template in templates { template.close() }
        let deadline = monotonicMilliseconds() + graceMilliseconds
        for template in templates {
            if template.awaitExit(until: deadline) {
                template.reap()
            } else {
                template.retire()
            }
        }
    }

    /// How long a killed template may take to end (a process killed ends at its next return from the kernel).
    static let killedMilliseconds: Int64 = 5_000

    /// Whether `executable` links the SDK's template code (`CLaunchTemplate`): its ELF section headers name the section
    /// `shieldbus_launch_template` (only the headers are read, not the program).
    static func canServe(executable: String) -> Bool {
        ELFFile(path: executable)?.hasSection(named: "shieldbus_launch_template") ?? false
    }

    /// Starts the template: `environment` is the plugin's, without a launch's own (its credential), which each launch
    /// brings.
    init(executable: String, arguments: [String], environment: [String: String], logPath: String, sandbox: ChildProcess.Sandbox?,
         kept: Bool = false) throws {
        var pair: [Int32] = [-1, -1]
        guard shieldbus_launch_channel(&pair) == 0 else { throw ChildProcess.SpawnError(executable: executable, errno: errno) }
        defer { Glibc.close(pair[1]) }
        do {
            pid = try ChildProcess.spawn(executable: executable, arguments: arguments,
                                         environment: Self.environment(environment, sandboxed: sandbox != nil, kept: kept), logPath: logPath,
                                         sandbox: sandbox, launchChannel: pair[1]).pid
        } catch {
            Glibc.close(pair[0])
            throw error
        }
        channel = pair[0]
        // Opened before anyone can reap it, so it names this process.
        processDescriptor = shieldbus_process_descriptor(pid)
    }

    deinit {
        if channel >= 0 { Glibc.close(channel) }
        if processDescriptor >= 0 { Glibc.close(processDescriptor) }
    }

    /// Asks a kept template to end every process of its sandbox and what they made in it (launch_template.c's
    /// `reset`); `awaitReset` takes its answer, so that a worker's templates are all reset at once. False when it
    /// cannot be asked (it is then retired).
    func askReset() -> Bool {
        guard isReady, !isGone else { return false }
        guard shieldbus_send_message(channel, "reset", 5) == 5 else {
            retire()
            return false
        }
        (resetAsked, wasReset) = (true, false)
        return true
    }

    /// Waits until `deadline` for the answer to `askReset`, and forgets what its channel still told of the last
    /// day's launches: a day then starts with it as the first day did. False when it did not answer (it is then
    /// retired).
    func awaitReset(until deadline: Int64) -> Bool {
        guard resetAsked else { return false }
        resetAsked = false
        while !wasReset {
            guard receive(waitingUntil: deadline) else {
                retire()
                return false
            }
        }
        (endings, started, forkFailed, hasNews) = ([], [], false, false)
        return true
    }

    /// The descriptor that is readable while the template has told something.
    var descriptor: Int32 { channel }

    /// Waits until the template serves, at most until `deadline` (monotonic ms).
    func awaitReady(until deadline: Int64) -> Bool {
        while !isReady && receive(waitingUntil: deadline) {}
        return isReady
    }

    /// The largest launch message a template takes (launch_template.c's `MAXIMUM_MESSAGE`, less its terminator).
    static let largestMessage = 256 * 1024 - 1

    /// Launches a child with `environment`: its pid as the broker sees it and inside the sandbox; nil when the
    /// template cannot (it is gone, not ready, failed to fork, or was silent until `deadline` — then it is retired, so
    /// a late launch dies with it).
    func launch(environment: [String: String], until deadline: Int64) -> (pid: pid_t, templatePID: pid_t)? {
        guard isReady, !isGone else { return nil }
        // Written in place: an array per variable, concatenated, would be a few allocations per variable at every launch.
        var message = Array("launch\n".utf8)
        message.reserveCapacity(environment.reduce(message.count) { $0 + $1.key.utf8.count + $1.value.utf8.count + 2 })
        for (key, value) in environment {
            message.append(contentsOf: key.utf8)
            message.append(UInt8(ascii: "="))
            message.append(contentsOf: value.utf8)
            message.append(0)
        }
        // Larger than the template takes: this launch is a plain one, and the template stays for the next.
        guard message.count <= Self.largestMessage else { return nil }
        let sent = message.withUnsafeBytes { shieldbus_send_message(channel, $0.baseAddress, UInt($0.count)) }
        guard sent == message.count else {
            retire()
            return nil
        }
        forkFailed = false
        while started.isEmpty && !forkFailed {
            guard receive(waitingUntil: deadline) else {
                retire()
                return nil
            }
        }
        guard !started.isEmpty else { return nil }
        let child = started.removeFirst()
        return (child.pid, child.templatePID)
    }

    /// The launches that ended since the last call.
    func takeEndings() -> [(templatePID: pid_t, status: Int32)] {
        while receive(waitingUntil: nil) {}
        hasNews = false
        defer { endings = [] }
        return endings
    }

    /// Waits for launch `templatePID` to end (after it was killed), at most until `deadline`: its wait status.
    func awaitEnding(of templatePID: pid_t, until deadline: Int64) -> Int32? {
        while true {
            if let index = endings.firstIndex(where: { $0.templatePID == templatePID }) { return endings.remove(at: index).status }
            guard receive(waitingUntil: deadline) else { return nil }
        }
    }

    /// Ends the template, and with it its sandbox (and whatever still runs in it), and waits for its process to end:
    /// reaped here when it is this process's child (a kept template retired by a day is its broker template's, which
    /// reaps it as any child; `hasEnded` then holds there).
    func retire() {
        close()
        _ = processDescriptor >= 0 ? shieldbus_signal_process(processDescriptor, SIGKILL) : kill(pid, SIGKILL)
        if awaitExit(until: monotonicMilliseconds() + Self.killedMilliseconds) { reap() }
    }

    /// Whether the template's process is known to have ended (its channel may still be open in this process: a day
    /// that retired a kept template did so in its own copy). Without a process descriptor it is never known: once a
    /// parent's wait for any child reaped it, its pid may name another process.
    var hasEnded: Bool { processDescriptor >= 0 && awaitExit(until: nil) }

    /// A template that ended: its channel closed here, and its process reaped if this process is its parent and has
    /// not yet. Nothing is signalled: it has ended.
    func forgetEnded() {
        close()
        reap()
    }

    /// Waits until the template's process has ended, at most until `deadline` (nil: not at all): whether it has.
    private func awaitExit(until deadline: Int64?) -> Bool {
        guard processDescriptor >= 0 else {
            // Without a descriptor only a child can be watched, by its pid.
            while !ChildProcess.hasEnded(pid) {
                guard let deadline, monotonicMilliseconds() < deadline else { return false }
                usleep(1_000)
            }
            return true
        }
        var waiting = pollfd(fd: processDescriptor, events: Int16(POLLIN), revents: 0)
        var ready: Int32
        repeat {
            let remaining = deadline.map { Int32(clamping: max(0, $0 - monotonicMilliseconds())) } ?? 0
            ready = poll(&waiting, 1, remaining)
        } while ready < 0 && errno == EINTR
        return ready > 0
    }

    /// Reaps the ended process if it is this process's child and not reaped yet.
    private func reap() {
        var info = siginfo_t()
        if processDescriptor >= 0 {
            _ = waitid(P_PIDFD, id_t(processDescriptor), &info, WEXITED | WNOHANG)
        } else {
            _ = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG)
        }
    }

    /// Closes the channel: the template exits by itself.
    func close() {
        if channel >= 0 { Glibc.close(channel) }
        channel = -1
        isGone = true
        hasNews = true
    }

    /// Reads one message, waiting for it until `deadline` (nil: not at all): false when none came or the channel closed.
    private func receive(waitingUntil deadline: Int64?) -> Bool {
        guard !isGone else { return false }
        if let deadline {
            var waiting = pollfd(fd: channel, events: Int16(POLLIN), revents: 0)
            var ready: Int32
            repeat {
                // A signal the broker handles (another plugin's SIGCHLD) ends a poll early: wait out the rest.
                let remaining = Int32(clamping: max(0, deadline - monotonicMilliseconds()))
                ready = poll(&waiting, 1, remaining)
            } while ready < 0 && errno == EINTR
            guard ready > 0 else { return false }
        }
        var sender: Int32 = 0
        let length = shieldbus_receive_from(channel, &buffer, UInt(buffer.count), &sender, 0)
        if length < 0 && errno == EAGAIN { return false }
        guard length > 0 else {
            // Ended: whatever of its launches still ran ended with it (its pid namespace's first process).
            retire()
            return false
        }
        let words = String(decoding: buffer[0..<length], as: UTF8.self).split(separator: " ")
        let numbers = words.dropFirst().compactMap { Int32($0) }
        // What only the template says is taken only from the process that said it was ready: a launch holds the
        // channel until it closes it, and must not answer a `reset` or report ends in the template's place.
        let fromTemplate = sender > 0 && sender == templateProcess
        switch words.first {
        case "ready" where templateProcess == 0 && sender > 0:
            templateProcess = sender
            isReady = true
        case "reset" where fromTemplate: wasReset = true
        case "started" where numbers.count == 1 && sender > 0: started.append((numbers[0], sender))
        case "ended" where numbers.count == 2 && fromTemplate:
            endings.append((numbers[0], numbers[1]))
            hasNews = true
        case "failed" where fromTemplate: forkFailed = true
        default: break
        }
        return true
    }
}
