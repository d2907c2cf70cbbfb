import Foundation

/// One plugin process started in its sandbox as a run starts it — the sandbox's plan (`PluginSandbox.Plan`, with the
/// /etc a run gathers once), its seccomp program, `ChildProcess.spawn` — and waited for to its end. It exists so that
/// the cost of a sandboxed start can be measured outside a run (`shieldbus-bench --suites floor`) on the very
/// arguments a run uses; a run starts its plugins through `PluginSupervisor`.
public struct SandboxedStart {
    let bubblewrap: String
    let runtimeDirectory: String
    let endpoint: String
    let etc: SandboxEtc

    /// Finds bwrap and gathers the sandbox's /etc in `runtimeDirectory`, as a run does once; `endpoint` is the bus
    /// the plugins are given (for `ipc://`, its socket must exist: the sandbox shows it).
    public init(runtimeDirectory: String, endpoint: String) throws {
        bubblewrap = try PluginSandbox.locateBubblewrap()
        etc = try SandboxEtc.make(in: runtimeDirectory)
        self.runtimeDirectory = runtimeDirectory
        self.endpoint = endpoint
    }

    /// Starts `spec`'s program in its sandbox, its output appended to `logPath`, waits for its end and returns the
    /// status `waitpid` gave for bwrap (which exits with its program's status).
    public func run(_ spec: PluginSpec, environment: [String: String], logPath: String) throws -> Int32 {
        let plan = PluginSandbox.Plan(spec: spec, runtimeDirectory: runtimeDirectory, endpoint: endpoint,
                                      infoDescriptor: ChildProcess.sandboxInfoDescriptor,
                                      seccompDescriptor: ChildProcess.sandboxSeccompDescriptor, etc: etc)
        let launch = try ChildProcess.spawn(executable: spec.executable, arguments: spec.arguments, environment: environment,
                                            logPath: logPath, sandbox: plan.sandbox(bubblewrap: bubblewrap))
        var status: Int32 = 0
        while waitpid(launch.pid, &status, 0) < 0 {
            guard errno == EINTR else { throw ChildProcess.SpawnError(executable: bubblewrap, errno: errno) }
        }
        return status
    }
}
