import BusProtocol
import DeviceAPI
import Foundation

/// Whether a run was healthy, read from its journal as it is written: a verdict on a degraded run proves nothing
/// (a plugin that stopped answering cannot break a lock it never had to keep), so a degraded run fails on its own.
///
/// Degraded means: the bus reported a plugin that did not answer in time (`ack-timeout`, `startup-timeout`), a
/// delivery lost or abandoned (`gap`, `delivery-dropped`, `delivery-abandoned`), or a monitor the OS throttled for a
/// callback loop (`callback-loop`: more than 60 callbacks in a minute, where a monitor that re-registers at each
/// callback spins); a plugin's process crashed (killed by a signal of its own fault, or exited
/// with a failure status: `plugin-crashed`) or was given up on (`plugin-failed`: a crash loop, a configuration error)
/// — the events it had in hand go to its next process, so the lock may well hold, but an extension that crashes is a
/// bug in it, and one given up on answers nothing. The broker's own ends of a process (SIGTERM, SIGKILL) and an exit
/// for want of storage (status 75, the plugin waits for room) are not crashes. A plugin the supervisor had already
/// stopped (the broker stopping, a force-quit, a device restart) publishes no `plugin.exited`, so its end is not read
/// at all.
public struct RunHealth {
    /// One way a run went wrong: a stable kind (what explore's shrinker keeps) and its account.
    public struct Problem: Equatable, Sendable {
        public var kind: String
        public var detail: String
    }

    /// Bus errors that mean the run was not healthy.
    public static let degradations: Set<String> = ["ack-timeout", "startup-timeout", "gap", "delivery-dropped", "delivery-abandoned", "callback-loop"]

    private var errors: [String: (count: Int, first: String)] = [:]

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
        case busError, pluginExited, pluginFailed
    }

    private static let kinds: [String: Kind] = ["bus.error": .busError, "plugin.exited": .pluginExited, "plugin.failed": .pluginFailed]

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
        errors.keys.sorted().map { code in
            Problem(kind: code, detail: "\(code) ×\(errors[code]!.count)\(errors[code]!.first.isEmpty ? "" : " (first: \(errors[code]!.first))")")
        }
    }

    public var isHealthy: Bool { problems.isEmpty }
}
