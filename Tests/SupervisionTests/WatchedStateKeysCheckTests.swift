@testable import ShieldBusSDK
import XCTest

/// A plugin whose `watchedStateKeys` the broker would refuse is stopped at its start with a configuration error that
/// names its own properties, not the hello's `watch` the broker would name.
final class WatchedStateKeysCheckTests: XCTestCase {
    func testAWatchWithoutItsSubscriptionOrWithABadPatternIsAConfigurationError() throws {
        XCTAssertNoThrow(try PluginRuntime.checkWatch(nil, subscriptions: []))
        XCTAssertNoThrow(try PluginRuntime.checkWatch(["group.a": ["isCurrentlyUnlocked", "reports.*"]], subscriptions: ["state."]))
        XCTAssertThrowsError(try PluginRuntime.checkWatch(["group.a": ["isCurrentlyUnlocked"]], subscriptions: ["deviceactivity."])) { error in
            guard case PluginError.configuration(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("watchedStateKeys") && message.contains("subscriptions"), message)
        }
        XCTAssertThrowsError(try PluginRuntime.checkWatch(["group.a": ["re*ports"]], subscriptions: ["state.changed"])) { error in
            guard case PluginError.configuration(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.hasPrefix("watchedStateKeys: ") && message.contains("re*ports"), message)
        }
    }
}
