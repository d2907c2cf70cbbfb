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
    /// of its own) for a day to inherit. Only descriptors it opened count: one the test process closed meanwhile is
    /// not the warm-up's doing.
    func testTheWarmUpsLeaveNoDescriptorOpen() throws {
        let before = try openDescriptors()
        BrokerWarmUp.run()
        DeviceOSWarmUp.run()
        XCTAssertEqual(try openDescriptors().subtracting(before), [])
    }

    /// The process's open descriptors, without the listing's own.
    private func openDescriptors() throws -> Set<Int32> {
        guard let folder = opendir("/proc/self/fd") else { throw CocoaError(.fileReadUnknown) }
        defer { closedir(folder) }
        let own = dirfd(folder)
        var found: Set<Int32> = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let descriptor = Int32(name), descriptor != own { found.insert(descriptor) }
        }
        return found
    }
}
