import AppGroupStore
import ArgumentParser
import Broker
import BusClient
import BusProtocol
import BusTools
import Configuration
import CProcessControl
import DeviceAPI
import DeviceOS
import Explore
import Foundation
import LockInvariant
import Logging
import RunPlanning
import SQLite
import ZeroMQ

extension ShieldBus {
    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run",
            abstract: "Run the broker — the simulated device — and the plugins its configuration names.",
            discussion: """
            Binds the bus in a private runtime directory (mode 0700), starts each configured plugin as a \
            child process, and serves until SIGINT or SIGTERM, then stops the plugins and removes its sockets.

            With a scenario, the broker plays the person's day and exits when it ends, printing a timeline. \
            In virtual time (--clock virtual) the day runs as fast as the plugins answer, and the same \
            scenario gives the same journal, byte for byte.

            Without --config, the default configuration is used (Config/default.yml).
            """
        )

        @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "file"))
        var config: String?

        @OptionGroup var bus: BusOptions

        @Option(name: .long, help: ArgumentHelp("Listen here instead of ipc://<runtime dir>/bus.sock, e.g. tcp://127.0.0.1:5560.", valueName: "endpoint"))
        var endpoint: String?

        @Option(name: .long, help: ArgumentHelp("Write every event to this journal file (JSON Lines).", valueName: "file"))
        var journal: String?

        @Option(name: .long, help: ArgumentHelp("Play this scenario (YAML) and exit when it ends.", valueName: "file"))
        var scenario: String?

        @Flag(name: .long, help: "Run without a scenario even if the configuration names one.")
        var noScenario = false

        @Option(name: .long, help: ArgumentHelp("The bus clock: real, scaled or virtual.", valueName: "mode"))
        var clock: String?

        @Option(name: .long, help: ArgumentHelp("Bus seconds per wall second with --clock scaled.", valueName: "n"))
        var speed: Double?

        @Option(name: .long, help: ArgumentHelp("Fidelity profile: faithful or ios-realistic.", valueName: "profile"),
                completion: .list(["faithful", "ios-realistic"]))
        var profile: String?

        @Option(name: .long, help: ArgumentHelp("An iOS release whose documented Screen Time bugs the device reproduces on top of the profile: \(IOSRelease.allCases.map { "\($0.rawValue) (\($0.summary))" }.joined(separator: "; ")); none for no release (docs/fidelity.md).", valueName: "release"),
                completion: .list(IOSRelease.names + ["none"]))
        var ios: String?

        @Option(name: .long, help: ArgumentHelp("Seed for the ios-realistic profile's randomness (a failing run replays with the same seed).", valueName: "n"))
        var seed: UInt64?

        @Option(name: .long, help: ArgumentHelp("The device's persistent state folder (default: <runtime dir>/state).", valueName: "dir"))
        var stateDir: String?

        @Flag(name: .long, help: "Keep the device state of an earlier run (scenario runs start from a fresh device by default).")
        var keepState = false

        @Flag(name: .long, help: "Start from a fresh device deliberately: remove the state folder's device, app-group and delivery state first (e.g. after a damaged store was reported).")
        var resetState = false

        @Flag(name: .long, help: "Continue the scenario a killed broker (SIGKILL, a power cut) was playing on this state folder: its state is kept, the scenario goes on from the first step it had not played, its clock from where the killed broker had got, and the journal is appended to.")
        var resume = false

        @Option(name: .long, help: ArgumentHelp("For fault tests: the broker kills itself (SIGKILL) when scenario step n (1-based) is due, before playing it; `--resume` goes on from there.", valueName: "n"))
        var crashAtStep: Int?

        @Option(name: .long, help: ArgumentHelp("For fault tests: the broker kills itself (SIGKILL) once it has journaled the first batch with an event on this topic (sequenced, or held from an observer), before saving it to bus.sqlite and sending it. In such a run each batch is saved on its own, so the cut is the same every time.", valueName: "topic"))
        var crashBeforeSaving: String?

        @Option(name: .long, help: ArgumentHelp("For fault tests: as --crash-before-saving, but just after the save, before sending.", valueName: "topic"))
        var crashAfterSaving: String?

        @Option(name: .long, help: ArgumentHelp("For fault tests: with --crash-before-saving or --crash-after-saving, the nth batch with an event on that topic (default: the first).", valueName: "n"))
        var crashOccurrence: Int = 1

        @Flag(name: .long, help: "Run the plugins unsandboxed: each can then read the cookie, the device's state and other plugins' environments, which no iOS extension can (for debugging only; said loudly).")
        var noSandbox = false

        @Flag(name: .long, help: "Execute an SDK-based plugin afresh at every launch instead of forking its launches from its template process (a zygote started once in its sandbox, at the plugin's second launch or, for a short-lived extension or a plugin the scenario launches again, with the run; each launch is still a new process with fresh memory). Also SHIELDBUS_PLAIN_LAUNCHES=1 in the environment, which `shieldbus explore` passes on to the days it plays.")
        var plainLaunches = false

        @Flag(name: .long, help: ArgumentHelp("Judge neither the lock invariant nor the run's health: the caller judges the journal itself (`shieldbus explore`'s days).", visibility: .hidden))
        var noCheck = false

        @Flag(name: .long, help: "Print the timeline as JSON Lines (one envelope per line) instead of text.")
        var json = false

        @Flag(name: .long, help: "Print no timeline, only the summary.")
        var quiet = false

        /// The plan's options, as given on the command line.
        var runOptions: RunOptions {
            var options = RunOptions()
            (options.config, options.runtimeDir, options.endpoint, options.journal) = (config, bus.runtimeDir, endpoint, journal)
            (options.scenario, options.noScenario, options.clock, options.speed) = (scenario, noScenario, clock, speed)
            (options.profile, options.ios, options.seed, options.stateDir) = (profile, ios, seed, stateDir)
            (options.keepState, options.resetState, options.resume, options.crashAtStep) = (keepState, resetState, resume, crashAtStep)
            (options.crashBeforeSaving, options.crashAfterSaving, options.crashOccurrence) = (crashBeforeSaving, crashAfterSaving, crashOccurrence)
            (options.noSandbox, options.plainLaunches) = (noSandbox, plainLaunches)
            return options
        }

        func run() throws { try run(loaded: nil) }

        /// `loaded`: the configuration a broker template read once for every day it forks (`BrokerTemplateCommand`);
        /// `kept`: the sandboxes and launch templates it keeps for the days of its explore worker.
        func run(loaded: LoadedConfiguration?, kept: KeptLaunchTemplates? = nil) throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            // Everything the broker and its plugins create (sockets, stores, journals, logs) is the user's alone.
            umask(0o077)
            let logger = Logger(label: "shieldbus")
            let plan = try exitingOnProblems { try RunPlan(options: runOptions, loaded: loaded, kept: kept) }
            // Reading a long scenario builds a large YAML tree that is garbage once the steps are read; hand those
            // pages back rather than hold them for the whole run.
            shieldbus_release_free_heap()
            if plan.brokerSettings.sandbox == .off && !plan.brokerSettings.plugins.isEmpty {
                printError("shieldbus: WARNING: plugins run UNSANDBOXED (--no-sandbox): each can read the bus cookie, the device's state and the other plugins' environments, as no iOS extension can")
            }
            let broker = Broker(settings: plan.brokerSettings, clock: plan.clock, logger: logger)
            broker.addService(plan.device)
            let timeline = Timeline(timeZone: plan.timeZone, json: json, quiet: quiet)
            // The check reads each event as it is journaled and keeps only what it judges on: a year's run holds
            // its facts, not its journal. A resumed scenario is checked as a whole: what the killed broker
            // journaled comes first.
            // A caller that judges the journal itself (`--no-check`) would only throw this reading away.
            let checker = noCheck || plan.scenario == nil || plan.checker.products.isEmpty ? nil : plan.checker
            var reading = checker?.reading()
            let keepsForExpectations = plan.scenario?.expectations.isEmpty == false
            var expectationJournal: [Envelope] = []
            var health = RunHealth()
            // Read once: the option's wrapper is not a plain stored value, and every event would ask it.
            let checksHealth = !noCheck
            func check(_ envelope: Envelope) {
                reading?.read(envelope)
                if checksHealth { health.read(envelope) }
                if keepsForExpectations && ExpectationCheck.reads(envelope) { expectationJournal.append(envelope) }
            }
            if resume {
                broker.whenJournalOpened { kept in try RunPlan.journaledSoFar(plan.brokerSettings.journalPath, keptBytes: kept, check) }
            }
            broker.observeEvents { envelope in
                timeline.record(envelope)
                check(envelope)
            }
            if plan.scenario == nil {
                printError("shieldbus: broker running on \(plan.brokerSettings.runtimeDirectory.path) (\(plan.clock.mode) clock); tap it with `shieldbus tap`; stop with Ctrl-C")
            }
            let started = monotonicMilliseconds()
            try exitingOnProblems { try broker.run(lock: plan.runtimeLock) }
            if plan.scenario != nil || !quiet {
                timeline.printSummary(wallMilliseconds: monotonicMilliseconds() - started, scenario: plan.scenario)
            }
            var broken = false
            if let reading {
                let verdicts = reading.verdicts()
                // With --json the verdicts are one JSON object on standard error (standard output is the timeline).
                printError(json ? LockReport.json(verdicts).jsonText : LockReport.text(verdicts))
                broken = verdicts.contains(where: { !$0.isHeld })
            } else if plan.scenario != nil && !noCheck {
                // A played day with nothing to judge it by says so: no verdict is not "held".
                printError(json ? JSONValue.object(["held": .null, "notChecked": .string(LockReport.noPromise(plan.configuration))]).jsonText
                                : "  lock invariant    not checked: \(LockReport.noPromise(plan.configuration))")
            }
            if reading != nil, !ProductRules.undeclared(in: plan.configuration).isEmpty, !json {
                printError("  lock invariant    not checked: \(LockReport.noPromise(plan.configuration))")
            }
            if let scenario = plan.scenario, !scenario.expectations.isEmpty {
                let failures = plan.expectationCheck.failures(of: scenario.expectations, in: expectationJournal)
                printError(failures.isEmpty ? "  expectations      \(scenario.expectations.count) held"
                                            : (["  expectations      \(failures.count) of \(scenario.expectations.count) FAILED"] + failures.map { "    - \(scenario.file):\($0.line): \($0.problem)" }).joined(separator: "\n"))
                broken = broken || !failures.isEmpty
            }
            // A degraded day fails whatever its verdict: a plugin that stopped answering kept no promise.
            if plan.scenario != nil, !health.isHealthy {
                let problems = health.problems
                printError(json ? JSONValue.object(["degraded": .array(problems.map { .object(["kind": .string($0.kind), "detail": .string($0.detail)]) })]).jsonText
                                : (["  run health        DEGRADED: \(problems.count) problem(s)"] + problems.map { "    - \($0.detail)" }).joined(separator: "\n"))
                broken = true
            }
            if broken { throw ExitCode(3) }
        }
    }
}

/// Runs `body`; a problem the person can fix is printed as one line and ends the command with its status
/// (2: the configuration or the options; 1: the runtime or state folder, the stores, the endpoint).
private func exitingOnProblems<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch {
        switch error {
        case is ConfigurationError, is RunPlan.Problem:
            printError("error: \(error)")
            throw ExitCode(2)
        case is RuntimeDirectoryError, is DeviceStateError, is AppGroupStoreError, is PrivateDirectoryError, is ListenError:
            printError("error: \(error)")
            throw ExitCode(1)
        default:
            throw error
        }
    }
}
