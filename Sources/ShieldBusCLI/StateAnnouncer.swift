import AppGroupStore
import BusClient
import BusProtocol
import BusTools
import Foundation
import DeviceAPI

/// Tells a running broker's plugins about a change made from the command line, as the SDK does for plugins'
/// writes: one `state.changed` event per change, with the same body.
final class StateAnnouncer {
    private let connection: BusConnection
    private let name = BusTool.name("state")

    /// Connects to the broker on `runtimeDir`; nil when none is running there.
    init?(runtimeDir: String?) throws {
        guard RuntimeDirectory.resolve(runtimeDir).hasBroker else { return nil }
        connection = try BusTool.connect(runtimeDir: runtimeDir, name: name, role: .tool, subscriptions: [Self.topic])
    }

    deinit { connection.close() }

    static let topic = "state.changed"

    /// Bus time now: the time a change made from the command line is stamped with, like plugins' writes.
    var busTime: Date { date(busTime: connection.welcome?.time ?? 0) }

    /// Publishes `change` and waits until the broker has sequenced it; returns its sequence number.
    func announce(_ change: StoreChange) throws -> UInt64 {
        try connection.publish(Publish(topic: Self.topic, body: [
            "group": .string(change.group), "key": .string(change.key), "writer": .string(change.writer),
            "version": .int(change.version), "removed": .bool(change.removed),
        ]))
        let deadline = monotonicMilliseconds() + 5000
        while monotonicMilliseconds() < deadline {
            switch try connection.receive(timeoutMilliseconds: 500) {
            case .event(let envelope, _)? where envelope.source == name && envelope.bodyValue["key"]?.stringValue == change.key:
                return envelope.seq
            case .error(let report)?:
                throw CommandFailure("the broker refused the announcement: \(report.message)")
            default:
                continue
            }
        }
        throw CommandFailure("the change is stored, but the broker did not confirm its announcement within 5 s")
    }
}
