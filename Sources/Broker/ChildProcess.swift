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

    static func spawn(executable: String, arguments: [String], environment: [String: String], logPath: String) throws -> pid_t {
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        posix_spawn_file_actions_addopen(&fileActions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&fileActions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&fileActions, 1, 2)
        // A plugin may be hostile, and one that outlives the broker must not hold what the broker's parent waits on
        // (Foundation's `Process` sees its child end only when every holder of a socket it passed down has closed it).
        let closing = shieldbus_spawn_close_from(&fileActions, 3)
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

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &fileActions, &attributes, argv, envp)
        guard rc == 0 else { throw SpawnError(executable: executable, errno: rc) }
        return pid
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
        let name = signalNumber == SIGKILL ? "SIGKILL" : signalNumber == SIGTERM ? "SIGTERM"
            : signalNumber == SIGSEGV ? "SIGSEGV" : signalNumber == SIGABRT ? "SIGABRT"
            : signalNumber == SIGILL ? "SIGILL (a Swift runtime trap)" : signalNumber == SIGTRAP ? "SIGTRAP (a Swift runtime trap)" : "signal \(signalNumber)"
        return "killed by \(name)"
    }

    /// The exit status of a process that exited (nil when a signal ended it).
    static func exitStatus(_ status: Int32) -> Int32? { status & 0x7F == 0 ? (status >> 8) & 0xFF : nil }

    /// Whether a wait status is a clean exit (status 0).
    static func isCleanExit(_ status: Int32) -> Bool { exitStatus(status) == 0 }
}
