import Configuration
import Foundation
import XCTest

/// `products:`: several products on one device, each with its companion app, selection, app group, stores (one
/// owner each) and plugins — and the single-product form (`device:`) read as one product, as before.
final class ProductsConfigurationTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func parse(_ text: String) throws -> ShieldBusConfiguration {
        try ShieldBusConfiguration.parse(YAMLValue.parse(text, file: "test.yml"))
    }

    func testTheShippedTwoProductConfiguration() throws {
        let configuration = try ShieldBusConfiguration.load(path: Self.root.appendingPathComponent("Config/two-products.yml").path)
        try configuration.validateReferences(catalog: AppCatalog.load(path: Self.root.appendingPathComponent("Config/catalog.yml").path))
        let products = configuration.resolvedProducts
        XCTAssertEqual(products.map(\.name), ["habit-lock", "speed-bump"])
        XCTAssertEqual(products.map(\.stores), [[.init(name: "habit-lock", owner: "habit-monitor")], [.init(name: "speed-bump", owner: "bump-monitor")]])
        XCTAssertEqual(products.map(\.companionPlugin), ["habit-app", "bump-app"])
        XCTAssertEqual(products[1].selectionApps, ["Facebook", "X", "Snapchat"])
        XCTAssertEqual(products[0].plugins, ["habit-monitor", "habit-shield", "habit-action", "habit-app"])
        XCTAssertEqual(products.map(\.habits), [["Read", "Walk", "Stretch", "Meditate", "Push-ups"], []], "the speed bump's app offers no habits")
    }

    func testASingleProductConfigurationIsOneProductAsBefore() throws {
        let configuration = try ShieldBusConfiguration.load(path: Self.root.appendingPathComponent("Config/habit-lock.yml").path)
        let products = configuration.resolvedProducts
        XCTAssertEqual(products.map(\.name), ["habit-lock"])
        XCTAssertEqual(products[0].stores, [.init(name: "lock", owner: "monitor")])
        XCTAssertEqual(products[0].companionApp, "Habit Lock")
        XCTAssertEqual(products[0].selectionCategories, ["games"])
        XCTAssertEqual(products[0].plugins, configuration.plugins.map(\.name))
        XCTAssertEqual(products[0].habits, ["Read", "Walk", "Stretch", "Meditate", "Push-ups"])
        XCTAssertNil(try parse("name: x\n").resolvedProducts[0].habits, "not given: any name goes")
    }

    static let plugins = """
    plugins:
      - {name: a-monitor, executable: m, role: monitor}
      - {name: a-app, executable: m, role: app}
      - {name: b-monitor, executable: m, role: monitor}

    """

    func assertRefused(_ products: String, _ message: String, line: Int, device: String = "", file: StaticString = #filePath, sourceLine: UInt = #line) {
        XCTAssertThrowsError(try parse(device + Self.plugins + products)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("test.yml:\(line):"), text, file: file, line: sourceLine)
            XCTAssertTrue(text.contains(message), text, file: file, line: sourceLine)
        }
    }

    func testMistakesAreNamedWithTheirLine() {
        assertRefused("products:\n  - {name: a, stores: {s: a-monitor}, plugins: [a-monitor, a-app]}\n  - {name: b, stores: {t: b-monitor}, plugins: [a-app, b-monitor]}\n",
                      "the plugin 'a-app' is already part of the product 'a'", line: 7)
        assertRefused("products:\n  - {name: a, stores: {s: a-monitor}, plugins: [a-monitor]}\n  - {name: b, stores: {s: b-monitor}, plugins: [b-monitor]}\n",
                      "the store 's' already belongs to the product 'a'", line: 7)
        assertRefused("products:\n  - {name: a, stores: {s: b-monitor}, plugins: [a-monitor]}\n",
                      "the owner 'b-monitor' is not one of this product's plugins", line: 6)
        assertRefused("products:\n  - {name: a, stores: {s: a-monitor}, plugins: [a-monitor, c]}\n",
                      "no plugin named 'c' in plugins", line: 6)
        assertRefused("products:\n  - {name: a, companionPlugin: b-monitor, stores: {s: a-monitor}, plugins: [a-monitor]}\n",
                      "'b-monitor' is not one of this product's plugins", line: 6)
        assertRefused("products:\n  - {name: a, plugins: [a-monitor]}\n", "product 'a' needs its ManagedSettings 'stores'", line: 6)
        assertRefused("products:\n  - {name: a, stores: {s: a-monitor}, plugins: [a-monitor]}\n",
                      "with `products:`, each product names its own companionApp", line: 1, device: "device: {companionApp: Habit Lock}\n")
        assertRefused("products:\n  - {name: a, stores: {s: a-monitor}, plugins: [a-monitor]}\n",
                      "with `products:`, each product names its own habits", line: 1, device: "device: {habits: [Read]}\n")
        assertRefused("products:\n  - {name: a, stores: {s: a-monitor}, plugins: [a-monitor], habits: [Read, read]}\n",
                      "the habit 'read' is listed twice", line: 6)
        assertRefused("products:\n  - {name: a, stores: {s: a-monitor}, plugins: [a-monitor], habits: [Read, \" \"]}\n",
                      "a habit needs a name", line: 6)
    }
}
