// PluginSandbox: supervised plugins confined as iOS confines extensions, with bubblewrap's namespaces.
import BusClient
import BusProtocol
import Foundation
import Synchronization

/// How the broker confines the plugins it starts. On iOS an extension cannot read another app's memory, environment
/// or files, and a shield configuration or report extension has no network; here a plugin is a process of the same
/// user, so without a sandbox it could read every credential on the machine. Debian's `bubblewrap` (`bwrap`) builds
/// the sandbox from kernel namespaces, one per launch:
///
/// - a **mount namespace** whose root is an empty tmpfs holding only the system's programs and libraries (read-only),
///   the plugin's own program, the bus socket, its options file, and the state it owns (its container, the App Group
///   stores, its record of handled events). The runtime folder (the cookie, the CURVE keys, the journal, other
///   plugins' options), the device's own state (`device.sqlite`, `bus.sqlite`) and the user's home are not there.
/// - a **pid namespace** in which the plugin is the first process: it sees no other process, so no other plugin's
///   environment (`/proc/<pid>/environ`) and no way to signal or trace one. It dies with the broker
///   (`--die-with-parent`), and everything in it dies with it.
/// - for the roles iOS gives no network (`shield`, `report`), a **seccomp filter** (`NetworkDenial`) that refuses
///   every socket but a Unix one, and io_uring (which could open sockets on its own): the bus is a Unix socket, so it
///   still works. (A network namespace would do the same at several times the cost of a launch: creating and tearing
///   one down takes tens of milliseconds, and a short-lived shield extension launches for every shield.)
/// - a `/dev` of the data devices (`null`, `zero`, `full`, `random`, `urandom`), no terminal.
/// - the runtime and state folders empty and read-only but for what the plugin is given in them (its container, App
///   Groups, record of handled events, options file, the bus socket), so that writing anywhere else there fails.
/// - ipc, uts and cgroup namespaces, so no System V object or host name is shared either.
/// - **no capability**, whoever runs the broker (root included), and none regained by executing a program.
///
/// The plugin runs as the same user: the namespaces, not permissions, keep it in.
public enum PluginSandbox {
    /// Whether plugins are sandboxed.
    public enum Mode: Equatable, Sendable {
        /// With the `bwrap` executable at this path.
        case bubblewrap(path: String)
        /// Not at all: for debugging only, and said loudly.
        case off
    }

    /// Where bubblewrap is, or why plugins cannot be sandboxed here.
    public static func locateBubblewrap(searchPath: String? = ProcessEnvironment.value(of: "PATH")) throws -> String {
        let folders = (searchPath ?? "/usr/bin:/bin").split(separator: ":").map(String.init) + ["/usr/bin", "/bin"]
        for folder in folders where !folder.isEmpty {
            let candidate = folder + "/bwrap"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw PluginSandboxError.bubblewrapMissing
    }

    /// The devices a plugin sees: bwrap's `--dev` less the terminals. Its `/dev/tty` is the controlling terminal of
    /// the broker's session, which the plugins share (a plugin is a process group of it, not a session): through it a
    /// plugin could type commands into the shell that started `shieldbus run` (`TIOCSTI`). Each node is one mount.
    static let deviceNodes = ["null", "zero", "full", "random", "urandom"]
    /// The links `--dev` makes to a process's own descriptors.
    static let deviceLinks = [("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")]

    /// The system's top folders beside /usr, each with the target of its link when it is one (Debian's merged /usr):
    /// read once per process, not at every launch's plan.
    static let topFolders: [(String, String?)] = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"].map { ($0, linkTarget($0)) }

    /// What the symbolic link at `path` holds; nil when it is not one.
    static func linkTarget(_ path: String) -> String? {
        var bytes = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &bytes, bytes.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: bytes[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The only files of /sys a plugin sees: how many processors the machine has and which are online.
    static let processorCountFiles = ["/sys/devices/system/cpu/possible", "/sys/devices/system/cpu/online"]

    /// What one plugin's sandbox is made of: the bwrap arguments before the plugin's own command line.
    struct Plan {
        let spec: PluginSpec
        /// The broker's runtime folder: hidden, then the bus socket shown again.
        let runtimeDirectory: String
        /// The bus endpoint the plugin is given (`ipc://<path>` or `tcp://…`).
        let endpoint: String
        /// The descriptor on which bwrap writes the plugin's pid outside the sandbox (none for a launch template,
        /// whose launches tell their own).
        let infoDescriptor: Int32?
        /// The descriptor from which bwrap reads the seccomp program, when the plugin is offline.
        let seccompDescriptor: Int32

        /// The sandbox's /etc and /sys, gathered once per run (nil: the host's files mounted one by one).
        var etc: SandboxEtc? = nil

        /// A sandbox kept across explored days (`KeptLaunchTemplates`). It shows the bus socket's folder (read-only)
        /// rather than the socket: it binds what exists when it is made, and each day's broker makes a new socket in
        /// that folder (connecting to a socket needs no write access to its mount, and the folder holds nothing else).
        /// It shows its ipc namespace's POSIX message queues at /dev/mqueue, so that its reset can find and remove
        /// those a day left.
        var isKeptAcrossDays = false

        /// The sandbox bwrap at `bubblewrap` makes of this plan, telling the program's pid when the plan has a
        /// descriptor for it.
        func sandbox(bubblewrap: String) -> ChildProcess.Sandbox {
            ChildProcess.Sandbox(bubblewrap: bubblewrap, arguments: arguments, seccomp: seccompProgram, tellsPID: infoDescriptor != nil)
        }

        /// The seccomp program the plugin runs under, if any: an offline plugin, on an ipc bus (a bus on tcp
        /// needs the network to be reached), on a machine whose system calls `NetworkDenial` knows.
        var seccompProgram: [UInt8]? {
            guard spec.offline, endpoint.hasPrefix("ipc://") else { return nil }
            return NetworkDenial.program
        }

        var arguments: [String] {
            // `--cap-drop ALL`: run by root, bwrap creates no user namespace and keeps every capability for the
            // plugin, which could then make a device node for the host's disk and mount it; a plugin has none.
            var arguments = ["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--as-pid-1", "--cap-drop", "ALL"]
            if let infoDescriptor { arguments += ["--info-fd", String(infoDescriptor)] }
            if seccompProgram != nil {
                arguments += ["--seccomp", String(seccompDescriptor)]
            } else if spec.offline && endpoint.hasPrefix("ipc://") {
                arguments.append("--unshare-net")  // no seccomp program for this machine: the slower way
            }
            arguments += ["--ro-bind", "/usr", "/usr"]  // the root itself is an empty tmpfs
            // Debian's merged /usr has /bin, /lib, … as links into /usr; older layouts have real folders.
            for (top, target) in PluginSandbox.topFolders {
                if let target {
                    arguments += ["--symlink", target, top]
                } else {
                    arguments += ["--ro-bind-try", top, top]
                }
            }
            // What a program needs of /etc to load, name users, read the time zone and reach the network; not the rest.
            if let etc {
                arguments += etc.arguments
            } else {
                for name in SandboxEtc.copiedFiles + SandboxEtc.copiedLinks + SandboxEtc.boundFolders { arguments += ["--ro-bind-try", "/etc/" + name, "/etc/" + name] }
            }
            arguments += ["--proc", "/proc", "--tmpfs", "/dev"]
            for node in PluginSandbox.deviceNodes { arguments += ["--dev-bind-try", "/dev/" + node, "/dev/" + node] }
            for (link, target) in PluginSandbox.deviceLinks { arguments += ["--symlink", target, "/dev/" + link] }
            arguments += ["--dir", "/dev/shm"]
            if isKeptAcrossDays { arguments += ["--mqueue", "/dev/mqueue"] }
            arguments += ["--tmpfs", "/tmp"]
            // The processor counts, read-only (security.md § 9): glibc's `sysconf` and libdispatch read them at every
            // process's start, and without them compose them from /proc/stat, which costs far more.
            arguments += etc?.systemArguments ?? SandboxEtc.systemFileArguments
            for folder in programFolders { arguments += ["--ro-bind", folder, folder] }
            // What the plugin is given outside the hidden folders is shown first: the hiding then covers what those
            // folders hold even when a folder given holds them; what it is given inside them is shown again after.
            // Outer folders first: each is then a mount of its own when it is made read-only, whichever holds the other.
            let hidden = Array(Set([runtimeDirectory] + spec.files.hidden)).sorted { ($0.count, $0) < ($1.count, $1) }
            let isInsideHidden = { (path: String) in hidden.contains { path == $0 || path.hasPrefix($0 + "/") } }
            let given = spec.files.readable.map { ("--ro-bind-try", $0) } + spec.files.writable.map { ("--bind-try", $0) } + spec.files.own.map { ("--bind", $0) }
            for (option, path) in given where !isInsideHidden(path) { arguments += [option, path, path] }
            for folder in hidden { arguments += ["--tmpfs", folder] }
            if endpoint.hasPrefix("ipc://") {
                let socket = String(endpoint.dropFirst("ipc://".count))
                if isKeptAcrossDays {
                    let folder = (socket as NSString).deletingLastPathComponent
                    arguments += ["--ro-bind", folder, folder]
                } else {
                    arguments += ["--bind", socket, socket]
                }
            } else {
                // On tcp the transport admits CURVE keys: the broker's public certificate and the local client key
                // (its per-launch credential, not the key, still says which plugin it is).
                let runtime = RuntimeDirectory(path: runtimeDirectory)
                for file in [runtime.serverCertificatePath, runtime.localClientCertificatePath] { arguments += ["--ro-bind-try", file, file] }
            }
            for (option, path) in given where isInsideHidden(path) { arguments += [option, path, path] }
            // Read-only around what it was given, as its root is: a plugin writing anywhere else in them (another
            // plugin's record, a store at a path of its own making) fails at once instead of writing into the
            // sandbox's memory and losing it when the plugin ends.
            for folder in hidden { arguments += ["--remount-ro", folder] }
            arguments += ["--chdir", spec.environment["HOME"].flatMap { (spec.files.own + spec.files.writable).contains($0) ? $0 : nil } ?? "/"]
            return arguments
        }

        var programFolders: [String] { PluginSandbox.programFolders(executable: spec.executable, arguments: spec.arguments) }
    }

    /// The programs' folders explore's broker template found (`findProgramFolders`) for the days it forks: reading an
    /// executable's RUNPATH and resolving its links is most of a sandbox's plan. Only an explore run keeps them — its
    /// programs are the ones it started with; a running device reads them at each start, so that a program rebuilt or
    /// re-linked before a restart is seen.
    private static let programFolderCache = Mutex<[String: [String]]>([:])

    /// Finds the folders of each program (its executable and arguments) and keeps them for this process's children:
    /// explore's broker template does so before it forks the days, so that no day reads them again.
    public static func findProgramFolders(_ programs: [(executable: String, arguments: [String])]) {
        for program in programs {
            let folders = readProgramFolders(executable: program.executable, arguments: program.arguments)
            programFolderCache.withLock { $0[cacheKey(program.executable, program.arguments)] = folders }
        }
    }

    /// Folders a plugin's program is read from: the executable's folder, the folders of arguments that name files (a
    /// script and the modules beside it), and the libraries the executable is linked to find (its RUNPATH: the Swift
    /// runtime of a debug build). The system's own folders are there already.
    static func programFolders(executable: String, arguments: [String]) -> [String] {
        if let found = programFolderCache.withLock({ $0[cacheKey(executable, arguments)] }) { return found }
        return readProgramFolders(executable: executable, arguments: arguments)
    }

    private static func cacheKey(_ executable: String, _ arguments: [String]) -> String {
        ([executable] + arguments).joined(separator: "\u{0}")
    }

    private static func readProgramFolders(executable path: String, arguments: [String]) -> [String] {
        var folders: [String] = []
        func add(_ folder: String) {
            let standard = standardized(absolute(folder))
            guard !standard.hasPrefix("/usr/"), standard != "/", !folders.contains(standard), access(standard, F_OK) == 0 else { return }
            folders.append(standard)
        }
        // The folder the program is run from (its own symbolic links resolved) and the one its file is in.
        add(folder(of: inRealFolder(path)))
        let executable = realPath(path) ?? standardized(absolute(path))
        add(folder(of: executable))
        for argument in arguments where argument.hasPrefix("/") && access(argument, F_OK) == 0 {
            add(folder(of: standardized(argument)))
        }
        for folder in ELFRunPath.folders(of: executable) { add(folder) }
        return folders
    }

    /// `path` with its symbolic links resolved (`realpath`), or nil when it cannot be (it is not there).
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` named from its folder's real path (its links and `..` resolved by `realpath`, each link before the `..`
    /// after it), keeping its own last name (a venv's `python` finds its `pyvenv.cfg` beside it); the folder as
    /// written, standardized, when it is not there. Inside a sandbox only a program's real folder is there.
    static func inRealFolder(_ path: String) -> String {
        let written = absolute(path)
        let writtenFolder = folder(of: written)
        let real = realPath(writtenFolder) ?? standardized(writtenFolder)
        let name = written.split(separator: "/").last.map(String.init) ?? written
        return (real == "/" ? "" : real) + "/" + name
    }

    /// `path` from the working folder when it is relative.
    private static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// The folder `path` (absolute) is in: "/" for a name at the root.
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// An absolute path without `.`, `..`, empty parts or a trailing slash, as read (no link followed): `..` at the
    /// root stays at the root.
    static func standardized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// A sandboxed plugin's exit as a wait status: bwrap exits with 128 + the signal that ended the plugin, which is
    /// told as that signal (a plugin that exits with such a status by itself is told so too: it cannot be told apart).
    static func programStatus(fromBubblewrap status: Int32) -> Int32 {
        guard let code = ChildProcess.exitStatus(status), code > 128, code < 128 + 65 else { return status }
        return code - 128
    }
}

/// Why plugins cannot be sandboxed.
public enum PluginSandboxError: Error, CustomStringConvertible, Equatable {
    case bubblewrapMissing

    public var description: String {
        switch self {
        case .bubblewrapMissing:
            return "plugins run sandboxed with bubblewrap, as iOS sandboxes extensions, but bwrap is not installed "
                + "(apt-get install bubblewrap); `--no-sandbox` runs them unsandboxed, for debugging only"
        }
    }
}
