import Configuration
import Foundation
import XCTest

/// Every input `make fuzz` (or a hand-made attack) found against the configuration loader and the scenario parser
/// (Tests/Fuzz/Regressions/configuration, …/scenario): each must be answered — read, or refused with a ConfigurationError
/// naming the file — never crash or hang.
final class ConfigurationFuzzRegressionTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func inputs(_ folder: String) throws -> [(name: String, text: String)] {
        let url = Self.root.appendingPathComponent("Tests/Fuzz/Regressions/\(folder)")
        return try FileManager.default.contentsOfDirectory(atPath: url.path).filter { !$0.hasPrefix(".") }.sorted().map { name in
            (name, String(decoding: try Data(contentsOf: url.appendingPathComponent(name)), as: UTF8.self))
        }
    }

    func assertAnswered(_ body: () throws -> Void, _ name: String) {
        do {
            try body()
        } catch let error as ConfigurationError {
            XCTAssertEqual(error.file, name, "\(error)")
        } catch {
            XCTFail("\(name): not a ConfigurationError: \(error)")
        }
    }

    func testConfigurationInputs() throws {
        for (name, text) in try inputs("configuration") {
            assertAnswered({ _ = try ShieldBusConfiguration.parse(YAMLValue.parse(text, file: name)) }, name)
        }
    }

    func testScenarioInputs() throws {
        let catalog = try AppCatalog.load(path: Self.root.appendingPathComponent("Config/catalog.yml").path)
        for (name, text) in try inputs("scenario") {
            assertAnswered({ _ = try Scenario.parse(YAMLValue.parse(text, file: name), catalog: catalog, defaultTimeZone: TimeZone(identifier: "UTC")!) }, name)
        }
    }
}
