import BusProtocol
import DeviceAPI
import Foundation

/// Whether a run was healthy, read from its journal as it is written: a verdict on a degraded run proves nothing
/// (a plugin that stopped answering cannot break a lock it never had to keep), so a degraded run fails on its own.
///
/// Degraded means: the bus reported a plugin that did not answer in time (`ack-timeout`, `startup-timeout`), a
/// delivery lost or abandoned (`gap`, `delivery-dropped`, `delivery-abandoned`); a plugin's process crashed (killed
/// by a signal of its own fault, or exited with a failure status: `plugin-crashed`) or was given up on
/// (`plugin-failed`: a crash loop, a configuration error) — the events it had in hand go to its next process, so the
/// lock may well hold, but an extension that crashes is a bug in it, and one given up on answers nothing; or a
/// callback loop — more than `loopLimit` DeviceActivity callbacks for one plugin's activities within a minute of bus
/// time, where a monitor that re-registers at each callback spins (on iOS the system throttles, then stops, such an
/// extension). The broker's own ends of a process (SIGTERM, SIGKILL) and an exit for want of storage (status 75,
/// the plugin waits for room) are not crashes. A plugin the supervisor had already stopped (the broker stopping, a
/// force-quit, a device restart) publishes no `plugin.exited`, so its end is not read at all.
public struct RunHealth {
    /// One way a run went wrong: a stable kind (what explore's shrinker keeps) and its account.
    public struct Problem: Equatable, Sendable {
        public var kind: String
        public var detail: String
    }

    /// Bus errors that mean the run was not healthy.
    public static let degradations: Set<String> = ["ack-timeout", "startup-timeout", "gap", "delivery-dropped", "delivery-abandoned"]
    /// Callbacks for one plugin's activities in any minute beyond which it loops.
    public static let loopLimit = 60

    private var errors: [String: (count: Int, first: String)] = [:]
    /// Each plugin's recent callbacks (bus times, ms), the last minute's.
    private var recentCallbacks: [String: [Int64]] = [:]
    private var registrants: [String: String] = [:]
    private var loops: [String: (count: Int, at: Int64)] = [:]

    public init() {}

    public mutating func read(_ envelope: Envelope) {
        // One look-up of the topic, not a comparison with each topic read here in turn: most events are none of them.
        guard let kind = Self.kinds[envelope.topic] else { return }
        switch kind {
        case .busError:
            guard envelope.source == JournalFacts.osSource else { return }
            let body = envelope.bodyValue
            guard let code = body["code"]?.stringValue, Self.degradations.contains(code) else { return }
            let who = body["receiver"]?.stringValue ?? body["plugin"]?.stringValue ?? body["sender"]?.stringValue
            count(code, first: body["message"]?.stringValue ?? who.map { "\($0)" } ?? "")
        case .startMonitoringRequest:
            if let activity = envelope.bodyValue["activity"]?.stringValue { registrants[activity] = envelope.source }
        case .callback:
            guard envelope.source == JournalFacts.osSource else { return }
            let plugin = envelope.bodyValue["activity"]?.stringValue.flatMap { registrants[$0] } ?? "?"
            var recent = recentCallbacks[plugin, default: []]
            recent.append(envelope.time)
            let cutoff = envelope.time - 60_000
            if let keep = recent.firstIndex(where: { $0 > cutoff }), keep > 0 { recent.removeFirst(keep) }
            recentCallbacks[plugin] = recent
            if recent.count > Self.loopLimit, (loops[plugin]?.count ?? 0) < recent.count { loops[plugin] = (recent.count, envelope.time) }
        case .pluginExited:
            guard envelope.source == JournalFacts.osSource else { return }
            let body = envelope.bodyValue
            guard let how = body["how"]?.stringValue, Self.isCrash(how) else { return }
            count("plugin-crashed", first: "\(body["name"]?.stringValue ?? "?"): \(how)")
        case .pluginFailed:
            guard envelope.source == JournalFacts.osSource else { return }
            let body = envelope.bodyValue
            count("plugin-failed", first: "\(body["name"]?.stringValue ?? "?"): \(body["reason"]?.stringValue ?? "given up on")")
        }
    }

    /// What `read` does with an event, by its topic.
    private enum Kind {
        case busError, startMonitoringRequest, callback, pluginExited, pluginFailed
    }

    private static let kinds: [String: Kind] = Dictionary(uniqueKeysWithValues: JournalFacts.monitorCallbacks.map { ($0, Kind.callback) }).merging([
        "bus.error": .busError,
        DeviceTopic.startMonitoringRequest: .startMonitoringRequest,
        "plugin.exited": .pluginExited,
        "plugin.failed": .pluginFailed,
    ]) { _, _ in preconditionFailure("a topic read twice") }

    private mutating func count(_ code: String, first: String) {
        errors[code] = ((errors[code]?.count ?? 0) + 1, errors[code]?.first ?? first)
    }

    /// The signals that end a plugin without a fault of its own: the broker's (SIGTERM to stop, SIGKILL for a hang,
    /// a force-quit, a device restart) and an interrupt. Any other ends it by its fault: a trap, an `abort`, a bad
    /// address, a write to a closed pipe, a system call the sandbox forbids.
    static let stoppingSignals: Set<String> = ["SIGKILL", "SIGTERM", "SIGINT"]

    /// Whether a `plugin.exited` `how` (`exited with status N`, `killed by SIGNAME …`, `killed by signal N`) is a
    /// crash: any signal but `stoppingSignals`, or a failure status — not the wait for storage, and not a
    /// configuration error, which the supervisor reports as `plugin.failed`.
    public static func isCrash(_ how: String) -> Bool {
        if how.hasPrefix("killed by ") {
            return !stoppingSignals.contains(String(how.dropFirst("killed by ".count).prefix { $0 != " " }))
        }
        let exitPrefix = "exited with status "
        guard how.hasPrefix(exitPrefix), let status = Int32(how.dropFirst(exitPrefix.count).prefix { $0.isNumber }) else { return false }
        return ![0, SupervisedExitStatus.storageUnavailable, SupervisedExitStatus.configurationError].contains(status)
    }

    /// What went wrong, in a fixed order; empty for a healthy run.
    public var problems: [Problem] {
        var found = errors.keys.sorted().map { code in
            Problem(kind: code, detail: "\(code) ×\(errors[code]!.count)\(errors[code]!.first.isEmpty ? "" : " (first: \(errors[code]!.first))")")
        }
        for plugin in loops.keys.sorted() {
            let loop = loops[plugin]!
            found.append(Problem(kind: "callback-loop", detail: "callback-loop: \(loop.count) DeviceActivity callbacks for \(plugin)'s activities within a minute (more than \(Self.loopLimit): it re-registers at each callback)"))
        }
        return found
    }

    public var isHealthy: Bool { problems.isEmpty }
}
