import Configuration
import Foundation
import LockInvariant
import XCTest

/// The products' rules as the checker reads them from configurations.
final class ProductRulesTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    var catalog: AppCatalog { get throws { try AppCatalog.load(path: Self.root.appendingPathComponent("Config/catalog.yml").path) } }

    func testEveryProductOfTheTwoProductConfiguration() throws {
        let configuration = try ShieldBusConfiguration.load(path: Self.root.appendingPathComponent("Config/two-products.yml").path)
        let checker = try LockInvariantChecker(configuration: configuration, catalog: try catalog)
        XCTAssertEqual(checker.products.map(\.name), ["habit-lock", "speed-bump"])
        XCTAssertEqual(checker.products.map(\.kind), [.habitLock, .speedBump])
        XCTAssertEqual(checker.products.map(\.stores), [["habit-lock"], ["speed-bump"]])
        XCTAssertEqual(checker.products.map(\.ownsEveryStore), [false, false])
        XCTAssertEqual(checker.products[1].selectedApps, ["Facebook", "X", "Snapchat"])
        XCTAssertEqual(checker.products[1].thresholdMinutes, 30)
        XCTAssertEqual(checker.timeZone.identifier, "Europe/Berlin")
    }

    func testTheShippedSingleProductConfigurations() throws {
        for (file, kind) in [("habit-lock", ProductRules.Kind.habitLock), ("focus-window", .focusWindow), ("speed-bump", .speedBump)] {
            let configuration = try ShieldBusConfiguration.load(path: Self.root.appendingPathComponent("Config/\(file).yml").path)
            let products = try LockInvariantChecker(configuration: configuration, catalog: try catalog).products
            XCTAssertEqual(products.map(\.kind), [kind])
            XCTAssertEqual(products.map(\.stores), [["lock"]])
            XCTAssertEqual(products.map(\.ownsEveryStore), [true])
        }
    }

    func testAWrongProductOptionNamesFileLineAndKey() throws {
        let text = "plugins:\n  - {name: monitor, executable: m, role: monitor, options: {product: focus-window, focusHours: [{start: \"25:00\", end: \"02:00\"}]}}\n"
        let configuration = try ShieldBusConfiguration.parse(YAMLValue.parse(text, file: "c.yml"))
        let catalog = try self.catalog
        XCTAssertThrowsError(try LockInvariantChecker(configuration: configuration, catalog: catalog)) { error in
            XCTAssertTrue("\(error)".hasPrefix("c.yml:2:"), "\(error)")
            XCTAssertTrue("\(error)".contains("plugins.monitor.options.focusHours: each window needs a start and an end"), "\(error)")
        }
    }
}
