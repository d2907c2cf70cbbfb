import Broker
import DeviceOS
import Foundation
import XCTest

/// What the broker template makes once before it forks days (`BrokerWarmUp`, `DeviceOSWarmUp`, docs/architecture.md
/// § 8): the runtime's first uses of the serving loop's types and of the device OS's bodies.
final class BrokerTemplateWarmUpTests: XCTestCase {
    /// Every body comes back as it went: a body its reader refused would stop the reading before the coding containers
    /// the warm-up is there to make.
    func testEveryBodyTheDeviceOSCodesComesBackAsItWent() {
        XCTAssertEqual(DeviceOSWarmUp.run(), [])
    }

    /// The template forks every day after its warm-up: the warm-up leaves no descriptor open (no store, socket or file
    /// of its own) for a day to inherit.
    func testTheWarmUpsLeaveNoDescriptorOpen() throws {
        let before = try openDescriptors()
        BrokerWarmUp.run()
        DeviceOSWarmUp.run()
        XCTAssertEqual(try openDescriptors(), before)
    }

    private func openDescriptors() throws -> Set<String> {
        // The listing's own descriptor is among them each time, under the same number.
        Set(try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))
    }
}
