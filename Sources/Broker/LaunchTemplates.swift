// LaunchTemplates: which plugins launch from a template process, and what happens when one dies.
import BusClient
import Foundation
import Logging

/// The supervisor's launch templates (`LaunchTemplate`): one per SDK-based plugin, started inside its sandbox; each
/// launch of the plugin from then on — a short-lived extension's for every callback, a restart after a crash or a kill
/// — is a fork of it. A template's start costs what a plain launch does (a sandbox, an exec), and a launch from it a
/// fork besides, so it pays only from a plugin's second launch on: a plugin's first launch is a plain one unless its
/// template was prepared (the supervisor prepares the short-lived extensions', which launch at every callback, and
/// those of the plugins the scenario launches again), and its second starts the template. A template that dies is
/// started again, and the launch that found it dead is a plain one (said in the log); a plugin whose template cannot
/// serve (it ended, or was silent, before it was ready, or died three times) is launched plainly for the rest of the
/// run. A program that is not SDK-based (a Python plugin, any other executable) always is.
final class LaunchTemplates {
    /// How long a template may take to start serving, and a launch from it to start (wall ms): past that, the launch
    /// is a plain one.
    static let readyMilliseconds: Int64 = 10_000
    static let launchMilliseconds: Int64 = 5_000
    /// Deaths after which a plugin's template is not started again.
    static let deathsBeforeGivingUp = 3

    private var templates: [String: LaunchTemplate] = [:]
    /// Plugins launched plainly for good, and why (for `canServe`, the executable's answer too).
    private var plain: [String: String] = [:]
    private var deaths: [String: Int] = [:]
    /// Plugins whose template is an explore worker's (`KeptLaunchTemplates`): not this run's to end.
    private var kept: Set<String> = []
    /// Plugins launched once, plainly, without a template prepared: their next launch starts one.
    private var launchedWithoutTemplate: Set<String> = []
    private let logger: Logger
    /// Where a template's channel is watched, so that the loop wakes when a launch ends.
    var wake: WakeSet?

    init(logger: Logger) { self.logger = logger }

    /// What a template needs to start: the plugin's executable, arguments, environment without a launch's own, log
    /// and sandbox (whose arguments ask for no `--info-fd`).
    struct Start {
        let executable: String
        let arguments: [String]
        let environment: [String: String]
        let logPath: String
        let sandbox: ChildProcess.Sandbox
    }

    /// Starts `name`'s template without waiting for it, unless it has one or launches plainly.
    func prepare(_ name: String, _ start: Start) {
        guard templates[name] == nil, plain[name] == nil else { return }
        guard LaunchTemplate.canServe(executable: start.executable) else {
            plain[name] = "its program is not SDK-based"
            return
        }
        do {
            let template = try LaunchTemplate(executable: start.executable, arguments: start.arguments, environment: start.environment,
                                              logPath: start.logPath, sandbox: start.sandbox)
            templates[name] = template
            wake?.watch(template.descriptor)
        } catch {
            giveUp(name, why: "its template could not start: \(error)")
        }
    }

    /// Launches `name` from `template`, kept across an explore worker's days and reset for this one.
    func adopt(_ name: String, _ template: LaunchTemplate) {
        templates[name] = template
        kept.insert(name)
        wake?.watch(template.descriptor)
    }

    /// Launches `name` from its template with `environment`; nil when it is to be launched plainly this time (its
    /// first launch, when no template was prepared for it). `start` is asked only when a template must start.
    func launch(_ name: String, environment: [String: String], _ start: () -> Start) -> ChildProcess.Launch? {
        if plain[name] == nil && templates[name] == nil {
            guard launchedWithoutTemplate.contains(name) else {
                launchedWithoutTemplate.insert(name)
                return nil
            }
            prepare(name, start())
        }
        guard let template = templates[name] else { return nil }
        if template.isGone {
            templates[name] = nil
            kept.remove(name)
            let count = deaths[name, default: 0] + 1
            deaths[name] = count
            if count >= Self.deathsBeforeGivingUp {
                giveUp(name, why: "its template process died \(count) times")
            } else {
                logger.warning("the launch template of a plugin ended; this launch is a plain one, and a new template starts",
                               metadata: ["plugin": "\(name)"])
                prepare(name, start())
            }
            return nil
        }
        guard template.awaitReady(until: monotonicMilliseconds() + Self.readyMilliseconds) else {
            // One that is slow to serve is not waited for again at every launch, stalling the broker each time.
            let why = template.isGone ? "its template ended before serving (see its log)"
                : "its template did not serve within \(Self.readyMilliseconds) ms (see its log)"
            template.retire()
            templates[name] = nil
            kept.remove(name)
            giveUp(name, why: why)
            return nil
        }
        guard let child = template.launch(environment: environment, until: monotonicMilliseconds() + Self.launchMilliseconds) else {
            logger.warning("the launch template of a plugin did not launch it; this launch is a plain one", metadata: ["plugin": "\(name)"])
            return nil
        }
        return ChildProcess.Launch(pid: child.pid, templatePID: child.templatePID)
    }

    /// The launches of `name` that ended since the last call, and whether its template is gone (then a launch of it
    /// that has not ended has died with it).
    func endings(of name: String) -> (ended: [(templatePID: pid_t, status: Int32)], templateGone: Bool) {
        guard let template = templates[name] else { return ([], true) }
        let ended = template.takeEndings()
        return (ended, template.isGone)
    }

    /// Whether a template has an ending or its own end that reaping has not taken, though its channel may have
    /// nothing more to read.
    var haveNews: Bool { templates.values.contains { $0.hasNews } }

    /// Waits for a killed launch of `name` to end: its wait status, nil if the template went (the launch with it).
    func awaitEnding(of name: String, templatePID: pid_t) -> Int32? {
        templates[name]?.awaitEnding(of: templatePID, until: monotonicMilliseconds() + Self.launchMilliseconds)
    }

    /// Ends every template (its launches have ended) and waits for their processes: told by its channel's closing, a
    /// template exits, and bwrap with it, so that what the template and its launches used is counted as the broker's
    /// children's (`getrusage`); one that has not ended within `graceMilliseconds` is killed.
    /// A kept template is left serving (its launches have ended; the next day resets it).
    func stopAll(graceMilliseconds: Int64 = 2_000) {
        LaunchTemplate.end(Array(templates.filter { !kept.contains($0.key) }.values), graceMilliseconds: graceMilliseconds)
        templates = [:]
    }

    private func giveUp(_ name: String, why: String) {
        plain[name] = why
        logger.warning("a plugin is launched plainly from now on: \(why)", metadata: ["plugin": "\(name)"])
    }
}
