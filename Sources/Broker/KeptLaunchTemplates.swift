// KeptLaunchTemplates: the plugins' sandboxes and launch templates of an explore worker, made once and kept for its days.
import BusClient
import CProcessControl
import Foundation
import Logging

/// The launch templates of one explore worker (docs/architecture.md § 8), each in its sandbox, started once by the
/// worker's broker template and handed to every day it forks: a day then pays a fork per launch, not a sandbox and a
/// template start per plugin. A day's process is still new, and its plugins' launches too; what is kept is the
/// template (held before `main`, with no state of any launch) and its sandbox's mounts.
///
/// A sandbox binds what exists when it is made, so a worker's days all use the same folders (`paths`): each day's
/// process empties them (`prepareDay`) rather than making them anew, and first resets every template — every process
/// of its sandbox killed and reaped, what they made in the sandbox's own memory removed (launch_template.c). The
/// templates are asked at once and each answers for itself: one that cannot be reset, or does not answer in time, is
/// retired alone, and that day starts its own as any run does. Before it forks the next day, the broker template
/// starts a template that ended again in its place (`restartEnded`). The templates are children of the broker
/// template, their sandboxes `--die-with-parent`: an explore that ends or is killed ends them.
///
/// Used by one thread at a time: the broker template that makes it, then the day's broker loop in each forked child.
public final class KeptLaunchTemplates: @unchecked Sendable {
    /// The templates by plugin name: only those of SDK-based programs.
    private(set) var templates: [String: LaunchTemplate]
    /// What each template was started from, to start it again.
    private let starts: [String: LaunchTemplates.Start]
    /// How many times each plugin's template was started again; past `LaunchTemplates.deathsBeforeGivingUp` it is not,
    /// and the worker's days start their own.
    private var restarts: [String: Int] = [:]
    /// Those the day in this process may launch from: reset at its start (`prepareDay`).
    private(set) var dayTemplates: [String: LaunchTemplate] = [:]
    /// The plugins as the sandboxes were planned for.
    let specs: [PluginSpec]
    /// The sandboxes' /etc, in the runtime folder.
    let sandboxEtc: SandboxEtc?
    public let runtimeDirectory: RuntimeDirectory
    public let stateDirectory: String
    public let endpoint: String
    /// How long a template may take to serve, or to be reset.
    static let readyMilliseconds: Int64 = 10_000
    /// How long an ended template may take to end when told to (its sandbox's processes die with it).
    static let endMilliseconds: Int64 = 2_000

    /// Starts a template for each SDK-based plugin of `specs` in its sandbox (shown the bus socket's folder, so that
    /// each day's new socket is seen), and waits until each serves. `specs` are planned on `runtimeDirectory` and
    /// `stateDirectory`, whose folders they are given exist. Runs no thread and keeps nothing open but the templates'
    /// channels (close-on-exec) and process descriptors, so that the caller may fork days after it.
    public init(specs: [PluginSpec], runtimeDirectory: RuntimeDirectory, stateDirectory: String, endpoint: String, bubblewrap: String) throws {
        self.specs = specs
        self.runtimeDirectory = runtimeDirectory
        self.stateDirectory = stateDirectory
        self.endpoint = endpoint
        let supervisor = PluginSupervisor(specs: specs, runtimeDirectory: runtimeDirectory, endpoint: endpoint, sandbox: .bubblewrap(path: bubblewrap),
                                          logger: Logger(label: "shieldbus.kept", factory: { _ in SwiftLogNoOpLogHandler() }), keepsSandboxes: true)
        try FileManager.default.createDirectory(atPath: runtimeDirectory.logsPath, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        sandboxEtc = try? SandboxEtc.make(in: runtimeDirectory.path, given: specs.flatMap { $0.files.readable + $0.files.writable + $0.files.own })
        supervisor.sandboxEtc = sandboxEtc
        var starts: [String: LaunchTemplates.Start] = [:], templates: [String: LaunchTemplate] = [:]
        do {
            for plugin in supervisor.plugins where LaunchTemplate.canServe(executable: plugin.spec.executable) {
                let start = supervisor.templateStart(plugin)
                starts[plugin.spec.name] = start
                templates[plugin.spec.name] = try Self.start(start)
            }
        } catch {
            // Those already started are ended here: nothing else holds them.
            LaunchTemplate.end(Array(templates.values), graceMilliseconds: Self.endMilliseconds)
            throw error
        }
        let deadline = monotonicMilliseconds() + Self.readyMilliseconds
        self.templates = templates.filter { $0.value.awaitReady(until: deadline) }
        self.starts = starts
        for (_, template) in templates where !template.isReady { template.retire() }
    }

    private static func start(_ start: LaunchTemplates.Start) throws -> LaunchTemplate {
        try LaunchTemplate(executable: start.executable, arguments: start.arguments, environment: start.environment, logPath: start.logPath,
                           sandbox: start.sandbox, kept: true)
    }

    /// In the broker template, before it forks a day: each template whose process ended (a day retired it, or it
    /// ended at a reset it could not make) is reaped and started again in its sandbox's place, and waited for — the
    /// day then launches from it as from the others. One that does not serve, or whose plugin's template was started
    /// again too often, is given up: the worker's days start their own for that plugin, as any run does.
    public func restartEnded() {
        for name in templates.keys.sorted() {
            guard let ended = templates[name], ended.hasEnded else { continue }
            // Its channel in this process, still open: closed, and the process reaped unless the broker template's
            // wait for any day already did.
            ended.forgetEnded()
            templates[name] = nil
            let count = restarts[name, default: 0] + 1
            restarts[name] = count
            guard count < LaunchTemplates.deathsBeforeGivingUp, let start = starts[name], let template = try? Self.start(start) else { continue }
            guard template.awaitReady(until: monotonicMilliseconds() + Self.readyMilliseconds) else {
                template.retire()
                continue
            }
            templates[name] = template
        }
    }

    /// What a day must find where the sandboxes bound it: folders it empties (a plugin's container, record and App
    /// Groups; the bus socket's folder), files it leaves (the sandboxes' /etc, the options files, each written with
    /// the same bytes every day) and the logs, which the templates' launches write to and a day starts empty.
    struct KeptPaths {
        var emptied: Set<String> = []
        var left: Set<String> = []
        var truncated: Set<String> = []
    }

    private var keptPaths: KeptPaths {
        var kept = KeptPaths()
        if endpoint.hasPrefix("ipc://") { kept.emptied.insert((String(endpoint.dropFirst("ipc://".count)) as NSString).deletingLastPathComponent) }
        if let sandboxEtc { kept.left.formUnion([sandboxEtc.path] + [sandboxEtc.systemPath].compactMap { $0 }) }
        for (name, _) in templates { kept.truncated.insert(runtimeDirectory.logsPath + "/\(name).log") }
        return kept
    }

    /// Ends every template and waits for its sandbox to end (the broker template's own end: no process of a worker
    /// outlives it), killing one that has not ended within `graceMilliseconds`.
    public func end(graceMilliseconds: Int64 = 2_000) {
        LaunchTemplate.end(Array(templates.values), graceMilliseconds: graceMilliseconds)
    }

    /// Whether a day planned on these folders and endpoint may use the templates.
    public func serves(runtimeDirectory: String, stateDirectory: String, endpoint: String) -> Bool {
        (runtimeDirectory, stateDirectory, endpoint) == (self.runtimeDirectory.path, self.stateDirectory, self.endpoint)
    }

    /// At the start of a day, in its process, before anything of it is made: resets every template and empties the
    /// runtime and state folders but for what the sandboxes bound — each plugin's own folders, its readable files
    /// under them, the logs, the bus socket's folder, /etc and /sys.
    public func prepareDay() throws { try prepareDay(resetMilliseconds: Self.readyMilliseconds) }

    /// The templates are all asked at once, then each is given until `resetMilliseconds` after that to answer: one
    /// that cannot be reset, or does not answer in time, is retired alone, and the day starts its own for its plugin.
    func prepareDay(resetMilliseconds: Int64) throws {
        let asked = templates.filter { $0.value.askReset() }
        let deadline = monotonicMilliseconds() + resetMilliseconds
        dayTemplates = asked.filter { $0.value.awaitReset(until: deadline) }
        var kept = keptPaths
        for spec in specs {
            for folder in spec.files.own { kept.emptied.insert(folder) }
            for file in spec.files.readable where file.hasPrefix(runtimeDirectory.path + "/") { kept.left.insert(file) }
        }
        try FolderEmptying(kept: kept).empty(runtimeDirectory.path)
        try FolderEmptying(kept: kept).empty(stateDirectory)
    }
}

/// Empties a folder but for the paths a kept sandbox bound: those `emptied` stay as folders with nothing in them, those
/// `left` stay as they are, those `truncated` stay as empty files; the folders that lead to them stay; all else goes.
struct FolderEmptying {
    let kept: KeptLaunchTemplates.KeptPaths

    func empty(_ folder: String) throws {
        let files = FileManager.default
        Self.letOwnerChange(folder)
        guard let names = try? files.contentsOfDirectory(atPath: folder) else { return }
        for name in names {
            let path = folder + "/" + name
            if kept.left.contains(path) { continue }
            if kept.truncated.contains(path) {
                guard truncate(path, 0) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
                continue
            }
            if kept.emptied.contains(path) || leadsToKept(path) {
                try empty(path)
                continue
            }
            Self.letOwnerChangeAll(path)
            try files.removeItem(atPath: path)
        }
    }

    /// A plugin may have taken its own write or search permission from a folder it made (as another user than root,
    /// the broker could then not remove what it holds): the owner's are given back before the folder is emptied.
    private static func letOwnerChange(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR, status.st_mode & 0o700 != 0o700 else { return }
        _ = chmod(path, (status.st_mode & 0o7777) | 0o700)
    }

    /// The same for a folder to be removed and every folder in it.
    private static func letOwnerChangeAll(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else { return }
        letOwnerChange(path)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] { letOwnerChangeAll(path + "/" + name) }
    }

    private func leadsToKept(_ path: String) -> Bool {
        let prefix = path + "/"
        return [kept.emptied, kept.left, kept.truncated].contains { $0.contains { $0.hasPrefix(prefix) } }
    }
}
