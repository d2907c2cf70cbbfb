import Foundation
@testable import ShieldBusSDK
import XCTest

/// The SDK's warm-up, which a plugin's launch template runs in its constructor before it serves
/// (`LaunchTemplateWarmUp`): it only makes type metadata, so it opens nothing a launch would inherit.
final class LaunchTemplateWarmUpTests: XCTestCase {
    private func openDescriptors() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").sorted()
    }

    func testTheWarmUpOpensNoDescriptor() throws {
        let before = try openDescriptors()
        LaunchTemplateWarmUp.run()
        XCTAssertEqual(try openDescriptors(), before)
    }
}
