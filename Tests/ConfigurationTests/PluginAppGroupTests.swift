import Configuration
import XCTest

/// A plugin's `appGroup:`: checked against `appGroups:` at load, and handed to the plugin in its environment.
final class PluginAppGroupTests: XCTestCase {
    let groups = "appGroups:\n  - {name: group.dev.shieldbus.focus, slices: {monitor: [\"*\"]}}\n"

    func parse(_ text: String) throws -> ShieldBusConfiguration {
        try ShieldBusConfiguration.parse(YAMLValue.parse(text, file: "test.yml"))
    }

    func testADeclaredAppGroupReachesThePluginsEnvironment() throws {
        let configuration = try parse(groups + "plugins:\n  - {name: monitor, executable: m, role: monitor, appGroup: group.dev.shieldbus.focus}\n")
        XCTAssertEqual(configuration.plugins[0].appGroup, "group.dev.shieldbus.focus")
        XCTAssertEqual(configuration.plugins[0].environment["SHIELDBUS_APP_GROUP"], "group.dev.shieldbus.focus")
    }

    func testAnUndeclaredAppGroupNamesFileLineKeyAndTheDeclaredGroups() {
        XCTAssertThrowsError(try parse(groups + "plugins:\n  - name: monitor\n    executable: m\n    role: monitor\n    appGroup: group.dev.shieldbus.fcous\n")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("test.yml:7:"), text)
            XCTAssertTrue(text.contains("plugins[0].appGroup: plugin 'monitor' names the app group 'group.dev.shieldbus.fcous', which is not declared — did you mean 'group.dev.shieldbus.focus'?"), text)
            XCTAssertTrue(text.contains("declared app groups: group.dev.shieldbus.focus"), text)
        }
    }

    func testWithoutAppGroupsTheMessageSaysWhereToDeclareOne() {
        XCTAssertThrowsError(try parse("plugins:\n  - {name: a, executable: m, role: app, appGroup: group.x}\n")) { error in
            XCTAssertTrue("\(error)".contains("no app groups are declared: add it under `appGroups:`"), "\(error)")
        }
    }
}
