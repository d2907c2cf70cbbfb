// SupervisedDay: a short scenario day whose plugins the broker supervises — processes, or threads of the test.

@testable import Broker
import BusClient
import BusProtocol
import Configuration
import DeviceAPI
@testable import DeviceOS
import Foundation
import ShieldBusTestSupport

/// A scenario day on the small focus device with the in-process fixture's app, shield and action delegate configured
/// as the broker's plugins. The broker runs in the test's thread on a virtual clock, with the device OS playing the
/// scenario, until the scenario stops it: over libzmq with the plugins as processes (`fixture-in-process`), or over
/// the in-memory transport with them hosted on the test's threads (`launcher`).
enum SupervisedDay {
    /// Set up in the app's turn, a shielded app opened, its shield's primary button pressed.
    static let scenario = """
        name: in-process-day
        start: 2026-01-01T09:00
        timeZone: UTC
        end: day 1 10:00
        steps:
          - at: "09:05"
            publish: {topic: app.setup.begin}
          - at: "09:10"
            open: Instagram
          - after: 10s
            press: primary
        """

    /// The configured plugins: name, role, principal class.
    static let plugins: [(name: String, role: Role, principalClass: String)] = [
        ("app", .app, "SettingUpApp"), ("shield", .shield, "NamingShield"), ("action", .action, "ClosingAction"),
    ]

    /// Plays the day and returns its journal's bytes; `launcher` hosts the plugins in this process (in memory).
    static func journal(hostingPluginsWith launcher: InProcessLauncher?) throws -> [UInt8] {
        let work = TemporaryDirectory()
        let catalog = try FocusDevice.catalog()
        let played = try Scenario.parse(YAMLValue.parse(scenario, file: "in-process-day.yml"), catalog: catalog, defaultTimeZone: TimeZone(identifier: "UTC")!)
        var device = FocusDevice.settings(catalog: catalog)
        // Wall-time deadlines out of reach: a slow pass on a loaded machine must decide nothing in one run only.
        device.replyTimeoutMilliseconds = 600_000
        let runtime = RuntimeDirectory(path: work.path + "/run")
        var settings = BrokerSettings(runtimeDirectory: runtime, table: .screenTime)
        settings.journalPath = work.path + "/journal.jsonl"
        settings.launchTemplates = false
        settings.sessionTimeoutMilliseconds = 600_000
        settings.acknowledgementTimeoutMilliseconds = 600_000
        let executable = BuildProducts.path("fixture-in-process")
        settings.plugins = plugins.map {
            PluginSpec(name: $0.name, executable: executable, environment: ["SHIELDBUS_PRINCIPAL_CLASS": $0.principalClass], role: $0.role)
        }
        let broker = Broker(settings: settings, clock: BusClock(mode: .virtual, start: busTime(played.start)))
        broker.addService(try DeviceOS(settings: device, catalog: catalog, statePath: work.path + "/device.sqlite", scenario: played))
        broker.inProcessLauncher = launcher
        let lock = try RuntimeLock(runtime)
        defer { lock.release() }
        try broker.open(lock: lock, handlingSignals: false) {
            guard launcher == nil else { return InMemoryTransport(waits: true) }
            return try ZeroMQTransport(try ZeroMQTransport.endpoint(settings.bindEndpoint), settings: settings, lock: lock, logger: broker.logger,
                                       countRefusal: { _ in })
        }
        let deadline = monotonicMilliseconds() + 60_000
        while !broker.isStopping && monotonicMilliseconds() < deadline { try broker.serveOnce() }
        let ended = broker.isStopping
        broker.shutDown()
        broker.close()
        guard ended else { throw SeamTestFailure("the scenario did not end within 60 s") }
        return try Array(Data(contentsOf: URL(fileURLWithPath: settings.journalPath!)))
    }
}
