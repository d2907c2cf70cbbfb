import AppGroupStore
import BusClient
import Foundation
@testable import ShieldBusSDK
import XCTest

/// The App-Group store a plugin's options name is checked once at launch (`PluginAppGroup.verify`), and the plugin's
/// own open of it (`SharedDefaults.forPlugin`) works in the store so checked instead of opening and checking it again.
final class AppGroupCheckedAtLaunchTests: XCTestCase {
    private let group = "group.dev.shieldbus.checked"
    private var state: String!

    override func setUpWithError() throws {
        state = NSTemporaryDirectory() + "/sbchecked-\(UUID().uuidString)"
        let container = AppGroupContainer(rootPath: state + "/" + StateFolder.appGroups)
        _ = try container.createGroup(group)
        try container.declareSlices(group: group, ["notifier": ["notifier.*"]])
        _ = try SharedDefaults(suiteName: group, container: container, writer: SharedDefaults.administrator).set("kept", forKey: "notifier.before")
        LaunchEnvironment.hostsPlugins.withValue { $0 = true }
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: state) }

    private var environment: [String: String] {
        ["SHIELDBUS_STATE_DIR": state, "SHIELDBUS_PLUGIN_NAME": "notifier", "SHIELDBUS_APP_GROUPS": group]
    }

    /// Puts a damaged file where the store is: the store opened before reads on, a new open is refused.
    private func damageTheStoreFile() throws {
        let store = try AppGroupContainer(rootPath: state + "/" + StateFolder.appGroups).storeURL(forGroup: group).path
        let garbage = store + ".garbage"
        try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: garbage))
        XCTAssertEqual(rename(garbage, store), 0)
    }

    func testThePluginsOpenTakesTheStoreCheckedAtLaunchOnce() throws {
        try LaunchEnvironment.$hosted.withValue(environment) {
            XCTAssertNil(try PluginAppGroup.verify(group, keeping: true))
            try damageTheStoreFile()
            let working = try SharedDefaults.forPlugin(suiteName: group)
            XCTAssertEqual(try working.string(forKey: "notifier.before"), "kept", "the store checked at launch, not opened again")
            XCTAssertEqual(working.writer, "notifier")
            XCTAssertThrowsError(try SharedDefaults.forPlugin(suiteName: group), "taken once: a second open opens the file, and refuses it") { error in
                XCTAssertTrue("\(error)".contains(group), "\(error)")
            }
        }
    }

    /// A plugin whose entry's `appGroup:` and options' `appGroup` name the same group (its runtime checks the first,
    /// its options' check the second) opens the group's store once at launch: the runtime's check finds it checked.
    func testTheEntrysGroupCheckedAgainAfterTheOptionsOnesIsNotOpenedTwice() throws {
        try LaunchEnvironment.$hosted.withValue(environment.merging(["SHIELDBUS_APP_GROUP": group]) { _, new in new }) {
            XCTAssertNil(try PluginAppGroup.verify(group, keeping: true))
            try damageTheStoreFile()
            XCTAssertNil(try PluginAppGroup.verify(), "the entry's group, checked at launch by the options' check, is not opened again")
            let working = try SharedDefaults.forPlugin()
            XCTAssertEqual(try working.string(forKey: "notifier.before"), "kept", "the store the options' check kept")
        }
    }

    func testACheckThatKeepsNothingLeavesThePluginsOpenToOpenTheStore() throws {
        try LaunchEnvironment.$hosted.withValue(environment) {
            XCTAssertNil(try PluginAppGroup.verify(group))
            try damageTheStoreFile()
            XCTAssertThrowsError(try SharedDefaults.forPlugin(suiteName: group), "opened, and so checked, again")
        }
    }

    func testTheCheckStillRefusesADamagedStoreAtLaunch() throws {
        try damageTheStoreFile()
        try LaunchEnvironment.$hosted.withValue(environment) {
            XCTAssertThrowsError(try PluginAppGroup.verify(group, keeping: true)) { error in
                guard case PluginError.configuration(let message)? = error as? PluginError else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("(appGroup: \(group)) cannot be opened"), message)
            }
            XCTAssertTrue(PluginAppGroup.checkedAtLaunch.current.isEmpty, "nothing kept of a store refused")
        }
    }
}
