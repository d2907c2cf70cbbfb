import Configuration
@testable import ReferenceKit
import XCTest

/// The keys the configuration accepts for the reference plugins are exactly the keys their option types decode.
final class ReferencePluginOptionsTests: XCTestCase {
    func testTheConfigurationAndThePluginsKnowTheSameKeys() {
        XCTAssertEqual(Set(ReferencePluginOptions.product), Set(ProductOptions.Key.allCases.map(\.rawValue)))
        XCTAssertEqual(Set(ReferencePluginOptions.notifier), Set(NotifierOptions.Key.allCases.map(\.rawValue)))
        XCTAssertEqual(Set(ReferencePluginOptions.notifierRule), Set(NotificationRule.Key.allCases.map(\.rawValue)))
        XCTAssertEqual(Set(ReferencePluginOptions.quietHours), Set(QuietHours.Key.allCases.map(\.rawValue)))
    }
}
