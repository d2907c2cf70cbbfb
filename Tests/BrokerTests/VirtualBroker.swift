import Broker
import BusClient
import BusProtocol
import DeviceAPI
import Foundation
import ShieldBusTestSupport
import XCTest

/// A `Broker` on a virtual clock (with `services` of a test's own) on its own thread, stopped as its process would be
/// (SIGTERM through its self-pipe).
final class VirtualBroker {
    let runtime: RuntimeDirectory
    private let finished = DispatchSemaphore(value: 0)

    init(directory: String, services: [BrokerService] = []) throws {
        runtime = RuntimeDirectory(path: directory + "/run")
        // Handed to the broker's thread once set up, and used there alone: `stop()` reaches it by a signal.
        nonisolated(unsafe) let broker = Broker(settings: BrokerSettings(runtimeDirectory: runtime, table: .screenTime), clock: BusClock(mode: .virtual, start: 0))
        for service in services { broker.addService(service) }
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [finished] in
            defer { finished.signal() }
            do { try broker.run(onReady: { ready.signal() }) } catch { XCTFail("the broker failed: \(error)") }
            ready.signal()
        }
        thread.start()
        XCTAssertEqual(ready.wait(timeout: .now() + 10), .success, "the broker did not get ready")
    }

    func stop() {
        kill(getpid(), SIGTERM)
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success, "the broker did not stop")
    }

    func connect(_ name: String, role: Role, subscriptions: [String], observing: [String] = []) throws -> BusConnection {
        let connection = try BusConnection(endpoint: runtime.brokerEndpoint(),
                                           hello: Hello(name: name, role: role, subscriptions: subscriptions, observations: observing),
                                           runtime: runtime)
        try connection.connect(timeoutMilliseconds: 5000)
        return connection
    }

    func status() throws -> JSONValue {
        let connection = try connect("status-\(UUID().uuidString.prefix(6).lowercased())", role: .tool, subscriptions: [])
        defer { connection.close() }
        return try connection.status()
    }
}
