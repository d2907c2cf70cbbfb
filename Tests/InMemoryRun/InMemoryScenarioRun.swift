// InMemoryScenarioRun: `shieldbus run --scenario` played in the test's process, over the in-memory transport.

import Broker
import Foundation
import Logging
import RunPlanning
import ShieldBusSDK
import ShieldBusTestSupport

/// A configuration's scenario played as `shieldbus run --scenario` plays it — the same plan (`RunPlan`), the same
/// broker and device — but in this process: the broker on its in-memory transport (`memory://…`) and every
/// configured plugin's program hosted on a thread (`HostedLauncher`) instead of started as a process over libzmq.
/// **For tests**: it must journal what the processes journal, byte for byte.
///
/// What stays shared by the hosted plugins, as it is the process's: `TZ` (every plugin of one device sets it to the
/// device's zone, and it stays so after the run), `HOME` (their containers are in their launch environment, but
/// Foundation's own caches follow the process's), the main queue. Unsandboxed (a thread has no sandbox of its own):
/// the sandbox changes what a plugin may reach, not what it says.
public struct InMemoryScenarioRun {
    public let journalBytes: Data
    /// Every launch, by plugin name, in order.
    public let launches: [String]

    /// Plays `scenario` (YAML) on `configuration` (YAML), both written to files as `ScenarioRun` writes them (the
    /// shipped catalog named when the configuration names none), with `programs` by executable name.
    public static func run(configuration: String, scenario: String, programs: [String: PluginProgram] = ShippedPrograms.all) throws -> InMemoryScenarioRun {
        let work = TemporaryDirectory(prefix: "sbm")
        let configPath = work.file("config.yml"), scenarioPath = work.file("scenario.yml")
        let catalog = BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path
        try (configuration.contains("catalog:") ? configuration : configuration + "\ncatalog: \(catalog)\n").write(toFile: configPath, atomically: true, encoding: .utf8)
        try scenario.write(toFile: scenarioPath, atomically: true, encoding: .utf8)
        var options = RunOptions()
        (options.config, options.scenario, options.runtimeDir) = (configPath, scenarioPath, work.file("run"))
        (options.journal, options.stateDir) = (work.file("journal.jsonl"), work.file("state"))
        options.noSandbox = true
        let plan = try RunPlan(options: options)
        var logger = Logger(label: "shieldbus.in-memory")
        logger.logLevel = .error
        let broker = Broker(settings: plan.brokerSettings, clock: plan.clock, logger: logger)
        broker.addService(plan.device)
        let launcher = HostedLauncher(programs: programs)
        try broker.runInMemory(hostingPluginsWith: launcher, lock: plan.runtimeLock)
        return InMemoryScenarioRun(journalBytes: FileManager.default.contents(atPath: work.file("journal.jsonl")) ?? Data(), launches: launcher.started)
    }
}
