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

    /// The groups each plugin is in, which its sandbox shows it and its SDK opens: each product's plugins their own
    /// product's group only, on a device with two.
    func testEachProductsPluginsAreInTheirProductsGroupOnly() throws {
        let configuration = try ShieldBusConfiguration.load(path: ProductsConfigurationTests.root.appendingPathComponent("Config/two-products.yml").path)
        let membership = configuration.pluginAppGroups
        for name in ["habit-monitor", "habit-shield", "habit-action", "habit-app"] {
            XCTAssertEqual(membership[name], ["group.dev.shieldbus.habitlock"], name)
        }
        for name in ["bump-monitor", "bump-shield", "bump-action", "bump-app"] {
            XCTAssertEqual(membership[name], ["group.dev.shieldbus.speedbump"], name)
        }
    }

    /// A plugin is in a group its entry, its options or the group's slices name; with one product and one group,
    /// every plugin is in it; a group named nowhere for a plugin is not its.
    func testAPluginIsInTheGroupsThatNameIt() throws {
        let two = """
            appGroups:
              - {name: group.a, slices: {sliced: [k]}}
              - {name: group.b, slices: {}}
            plugins:
              - {name: entry, executable: m, role: generic, appGroup: group.b}
              - {name: options, executable: m, role: generic, options: {appGroup: group.a}}
              - {name: sliced, executable: m, role: generic}
              - {name: none, executable: m, role: generic}

            """
        let membership = try parse(two).pluginAppGroups
        XCTAssertEqual(membership["entry"], ["group.b"])
        XCTAssertEqual(membership["options"], ["group.a"])
        XCTAssertEqual(membership["sliced"], ["group.a"])
        XCTAssertEqual(membership["none"], [], "two groups and nothing names one: in neither")
        let one = try parse(groups + "plugins:\n  - {name: other, executable: m, role: generic}\n").pluginAppGroups
        XCTAssertEqual(one["other"], ["group.dev.shieldbus.focus"], "one product, one group: every plugin is in it")
    }
}
