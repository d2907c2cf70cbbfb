import CProcessControl
import Foundation

/// Starting a child process with posix_spawn: its own process group (so a Ctrl-C reaches only the broker,
/// which stops its plugins in order), default signal handling, its output appended to a log file, and no other
/// descriptor of the broker's — not its journal, stores or sockets, nor whatever its own parent left open.
enum ChildProcess {
    struct SpawnError: Error, CustomStringConvertible {
        let executable: String
        let errno: Int32
        var description: String { "cannot start \(executable): \(String(cString: strerror(errno)))" }
    }

    /// A started child: the process the broker waits for, and the plugin's own program (another process when a
    /// sandbox wraps it: bwrap waits for the program, which is the first process of its own pid namespace). The
    /// program's pid is read from bwrap's `--info-fd` when first asked (to signal it, at its hello), not at the start:
    /// bwrap writes it only once the namespaces exist, and a launch need not wait for that.
    final class Launch {
        let pid: pid_t
        /// Launched from its plugin's template: its pid inside the template's sandbox, which the template's reports name.
        let templatePID: pid_t?
        private var info: Int32
        private var program: pid_t?

        init(pid: pid_t, programPID: pid_t? = nil, templatePID: pid_t? = nil) {
            (self.pid, program, self.templatePID, info) = (pid, programPID ?? pid, templatePID, -1)
        }

        /// A sandboxed start whose program's pid bwrap writes on `info`.
        init(pid: pid_t, info: Int32) {
            (self.pid, program, templatePID, self.info) = (pid, nil, nil, info)
        }

        deinit { if info >= 0 { close(info) } }

        var programPID: pid_t {
            if let program { return program }
            // bwrap closes the descriptor empty when it failed before the namespaces existed (its error is in the
            // log, and its exit is reaped as the plugin's).
            let read = ChildProcess.readProgramPID(from: info) ?? pid
            close(info)
            info = -1
            program = read
            return read
        }
    }

    /// The descriptor on which a sandbox tells the program's pid, and the one it reads its seccomp program from.
    static let sandboxInfoDescriptor: Int32 = 3
    static let sandboxSeccompDescriptor: Int32 = 4
    /// The descriptor of a launch template's channel to the broker (`LaunchTemplate`).
    static let launchChannelDescriptor: Int32 = 5

    /// Starts `executable`, inside bubblewrap when `sandbox` gives its path and arguments (which end before the
    /// plugin's own command line; `tellsPID`: they ask for `--info-fd`). `launchChannel`, if any, is handed down as
    /// descriptor `launchChannelDescriptor`.
    static func spawn(executable: String, arguments: [String], environment: [String: String], logPath: String,
                      sandbox: Sandbox? = nil, launchChannel: Int32? = nil) throws -> Launch {
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        posix_spawn_file_actions_addopen(&fileActions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&fileActions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&fileActions, 1, 2)
        var info: [Int32] = [-1, -1]
        if sandbox?.tellsPID == true {
            // Close-on-exec, so no other child inherits it (the broker starts its children from one thread).
            guard pipe(&info) == 0 else { throw SpawnError(executable: executable, errno: errno) }
            for descriptor in info { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&fileActions, info[1], sandboxInfoDescriptor)
        }
        defer { for descriptor in info where descriptor >= 0 { close(descriptor) } }
        // The seccomp program waits in a pipe for bwrap to read (a few hundred bytes: within the pipe's buffer).
        var seccomp: [Int32] = [-1, -1]
        if let program = sandbox?.seccomp {
            guard pipe(&seccomp) == 0 else { throw SpawnError(executable: executable, errno: errno) }
            for descriptor in seccomp { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
            let written = program.withUnsafeBytes { write(seccomp[1], $0.baseAddress, $0.count) }
            close(seccomp[1])
            seccomp[1] = -1
            guard written == program.count else { close(seccomp[0]); throw SpawnError(executable: executable, errno: errno) }
            posix_spawn_file_actions_adddup2(&fileActions, seccomp[0], sandboxSeccompDescriptor)
        }
        defer { if seccomp[0] >= 0 { close(seccomp[0]) } }
        if let launchChannel { posix_spawn_file_actions_adddup2(&fileActions, launchChannel, launchChannelDescriptor) }
        // A plugin may be hostile, and one that outlives the broker must not hold what the broker's parent waits on
        // (Foundation's `Process` sees its child end only when every holder of a socket it passed down has closed it).
        let handedDown = [info[1] >= 0 ? sandboxInfoDescriptor : nil, seccomp[0] >= 0 ? sandboxSeccompDescriptor : nil,
                          launchChannel.map { _ in launchChannelDescriptor }].compactMap { $0 }
        let firstClosed = (handedDown.max() ?? 2) + 1
        // Below it, a descriptor not handed down is /dev/null, not whatever the broker has there.
        for descriptor in 3..<max(3, firstClosed) where !handedDown.contains(descriptor) {
            posix_spawn_file_actions_addopen(&fileActions, descriptor, "/dev/null", O_RDONLY, 0)
        }
        let closing = shieldbus_spawn_close_from(&fileActions, firstClosed)
        guard closing == 0 else { throw SpawnError(executable: executable, errno: closing) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        for signalNumber in [SIGINT, SIGTERM, SIGCHLD, SIGPIPE, SIGHUP] { sigaddset(&defaultSignals, signalNumber) }
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        // Inside a sandbox only the program's real folder is there: a folder reached through a symbolic link
        // (SwiftPM's `.build/debug`) is named by the folder it leads to.
        let commandLine = sandbox.map { [$0.bubblewrap] + $0.arguments + ["--", PluginSandbox.inRealFolder(executable)] } ?? [executable]
        let argv = (commandLine + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, commandLine[0], &fileActions, &attributes, argv, envp)
        guard rc == 0 else { throw SpawnError(executable: commandLine[0], errno: rc) }
        guard sandbox?.tellsPID == true else { return Launch(pid: pid) }
        close(info[1])
        info[1] = -1
        defer { info[0] = -1 }  // the launch's now
        return Launch(pid: pid, info: info[0])
    }

    /// What a sandboxed start runs in: bwrap's path, its arguments, the seccomp program it reads, and whether the
    /// arguments ask it to tell the program's pid.
    struct Sandbox {
        let bubblewrap: String
        let arguments: [String]
        let seccomp: [UInt8]?
        let tellsPID: Bool
    }

    /// The `"child-pid": N` of bwrap's `--info-fd` JSON, read to its end.
    fileprivate static func readProgramPID(from descriptor: Int32) -> pid_t? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while bytes.count < 4096 {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let key = text.range(of: "\"child-pid\":") else { return nil }
        return pid_t(text[key.upperBound...].drop { $0 == " " }.prefix { $0.isNumber })
    }

    /// Whether process `pid` (not necessarily our child) has ended: it is gone, or a zombie its parent has not
    /// reaped yet.
    static func hasExited(_ pid: pid_t) -> Bool {
        // The broker asks at every launch's hello. A process descriptor is readable once its process has ended: three
        // calls that read nothing, where /proc/<pid>/stat has the kernel gather every figure of the process's line.
        let process = shieldbus_process_descriptor(pid)
        if process >= 0 {
            defer { close(process) }
            var ended = pollfd(fd: process, events: Int16(POLLIN), revents: 0)
            let ready = poll(&ended, 1, 0)
            if ready >= 0 { return ready > 0 }
        } else if errno == ESRCH {
            return true
        }
        // A kernel without process descriptors: the state in /proc, read with POSIX calls into one buffer.
        let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return true }
        defer { close(descriptor) }
        // The name in parentheses may hold ")" too: the state follows the last one (the rest of the line is numbers).
        var bytes = [UInt8](repeating: 0, count: 512)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0, let end = bytes[0..<count].lastIndex(of: UInt8(ascii: ")")) else { return true }
        guard let state = bytes[(end + 1)..<count].first(where: { $0 != UInt8(ascii: " ") }) else { return true }
        return state == UInt8(ascii: "Z") || state == UInt8(ascii: "X") || state == UInt8(ascii: "x")
    }

    /// Whether child `pid` has ended, without reaping it: a zombie the broker has not yet waited for has ended.
    /// A pid that is not (or no longer) our child has ended too.
    static func hasEnded(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return true }
        return info._sifields._kill.si_pid != 0  // left zero when no child has changed state
    }

    /// How a process ended, in words.
    static func describe(waitStatus status: Int32) -> String {
        let signalNumber = status & 0x7F
        if signalNumber == 0 { return "exited with status \((status >> 8) & 0xFF)" }
        let name: String
        switch signalNumber {
        case SIGKILL: name = "SIGKILL"
        case SIGTERM: name = "SIGTERM"
        case SIGINT: name = "SIGINT"
        case SIGSEGV: name = "SIGSEGV"
        case SIGABRT: name = "SIGABRT"
        case SIGBUS: name = "SIGBUS"
        case SIGFPE: name = "SIGFPE"
        case SIGILL: name = "SIGILL (a Swift runtime trap)"
        case SIGTRAP: name = "SIGTRAP (a Swift runtime trap)"
        case SIGSYS: name = "SIGSYS (a system call the sandbox forbids)"
        default: name = "signal \(signalNumber)"
        }
        return "killed by \(name)"
    }

    /// The exit status of a process that exited (nil when a signal ended it).
    static func exitStatus(_ status: Int32) -> Int32? { status & 0x7F == 0 ? (status >> 8) & 0xFF : nil }

    /// Whether a wait status is a clean exit (status 0).
    static func isCleanExit(_ status: Int32) -> Bool { exitStatus(status) == 0 }
}
