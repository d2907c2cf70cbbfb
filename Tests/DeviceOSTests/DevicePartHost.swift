import Broker
import BusProtocol
import Configuration
import DeviceAPI
@testable import DeviceOS
import Foundation
import ShieldBusTestSupport
import XCTest

/// The device as one part of it sees it, for building that part alone: an `InProcessBus` with no service on it
/// (the test hands the part its requests), a device store in a temporary folder, and the refusals and storage
/// failures the part reported, kept to be read.
final class DevicePartHost: DeviceHost {
    let inProcessBus: InProcessBus
    let state: DeviceStateStore
    let directory: DeviceDirectory
    private(set) var refusals: [String] = []
    private(set) var storageFailures: [String] = []
    private var correlation = 0

    var bus: any ServiceBus { inProcessBus }

    /// The Focus device (`FocusDevice`) at 10:00 UTC, its companion app run by the plugin `app`; `adjust` changes its settings.
    init(folder: TemporaryDirectory, start: BusTime = 1_767_261_600_000, adjust: (inout DeviceSettings) -> Void = { _ in }) throws {
        inProcessBus = InProcessBus(start: start)
        state = try DeviceStateStore(path: folder.file("device.sqlite"))
        let catalog = try FocusDevice.catalog()
        var settings = FocusDevice.settings(catalog: catalog, companionPlugin: "app")
        adjust(&settings)
        let tokens = TokenIssuer(seed: settings.fidelity.seed, epoch: 0)
        tokens.issueAll(for: catalog)
        directory = DeviceDirectory(settings: settings, catalog: catalog, tokens: tokens)
    }

    func storageFailed(_ failure: String) { storageFailures.append(failure) }

    func nextCorrelation(_ prefix: String) -> String {
        correlation += 1
        return "os-\(prefix)-\(correlation)"
    }

    func actionDidNothing(_ code: String, _ message: String) { refusals.append(code) }

    func inputChangedNothing(_ code: String, _ message: String) -> Bool {
        refusals.append(code)
        return false
    }

    /// `source` publishes `topic`: the envelope as the bus numbered it, for the test to hand to the part.
    func request<Body: Encodable>(_ topic: String, _ body: Body, from source: String, corr: String) -> Envelope {
        inProcessBus.publish(topic, body, from: source, corr: corr)
        return inProcessBus.journal.last!
    }

    /// The reply to the request `corr`, decoded.
    func reply<Value: Codable & Hashable>(_ corr: String, as value: Value.Type) throws -> DeviceReply<Value> {
        let envelope = try XCTUnwrap(inProcessBus.journal.last { $0.corr == corr && $0.isReply }, "no reply to \(corr)")
        return try DeviceAPICoding.decode(DeviceReply<Value>.self, from: envelope.body)
    }

    /// The topics the part said, in order (what the test published left out).
    var said: [String] { inProcessBus.journal.filter { $0.source == "broker" }.map(\.topic) }

    func app(_ name: String) throws -> CatalogApp { try XCTUnwrap(directory.catalog.app(named: name)) }
}
