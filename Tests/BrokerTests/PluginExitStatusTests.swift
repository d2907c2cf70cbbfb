import ShieldBusSDK
import SQLite
import XCTest

/// The exit status by which a plugin built on the SDK tells its supervisor whether starting it again can help.
final class PluginExitStatusTests: XCTestCase {
    func testOnlyTheSDKsOwnStoresRefusedForWantOfStorageAskToBeStartedAgainLater() {
        XCTAssertEqual(PluginExitStatus.status(for: PluginError.storageUnavailable("the disk is full")), 75)
        XCTAssertEqual(PluginExitStatus.status(for: PluginError.configuration("no app group named 'x'")), 78)
        // A plugin's own database is its to judge: its storage error is a failure like any other.
        let full = SQLiteError.failed(code: 13, extendedCode: 13, message: "database or disk is full", sql: nil, path: "/own.sqlite")
        XCTAssertEqual(PluginExitStatus.status(for: full), PluginExitStatus.failure)
    }
}
