import Configuration
import Foundation
import XCTest

/// Files built to exhaust the reader: refused at once, naming file and line, before anything is expanded.
final class YAMLBombTests: XCTestCase {
    /// Nine levels of nine aliases each: 9⁹ (387 million) strings once expanded, a few hundred bytes as text.
    func bomb(indent: String) -> String {
        var lines = ["\(indent)l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
        for level in 1...9 {
            lines.append("\(indent)l\(level): &l\(level) [" + Array(repeating: "*l\(level - 1)", count: 9).joined(separator: ", ") + "]")
        }
        return lines.joined(separator: "\n")
    }

    func assertRefusedAsBomb(_ body: () throws -> Void, file: String, line expectedLine: Int, sourceFile: StaticString = #filePath, sourceLine: UInt = #line) {
        XCTAssertThrowsError(try body(), file: sourceFile, line: sourceLine) { error in
            guard let error = error as? ConfigurationError else { return XCTFail("\(error)", file: sourceFile, line: sourceLine) }
            XCTAssertEqual(error.file, file, file: sourceFile, line: sourceLine)
            XCTAssertTrue((expectedLine...(expectedLine + 9)).contains(error.line), "\(error) names a line of the bomb", file: sourceFile, line: sourceLine)
            XCTAssertTrue(error.message.contains("YAML bomb"), error.message, file: sourceFile, line: sourceLine)
        }
    }

    func testBombInPluginOptionsIsRefusedWithFileAndLine() throws {
        let text = "name: bomb\nplugins:\n  - name: p\n    executable: x\n    role: generic\n    options:\n" + bomb(indent: "      ")
        // The bomb is written on lines 7 to 16.
        assertRefusedAsBomb({ _ = try ShieldBusConfiguration.parse(YAMLValue.parse(text, file: "bomb.yml")) }, file: "bomb.yml", line: 7)
    }

    func testBombInAScenarioFileIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("yamlbomb-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("day.yml").path
        try ("name: day\nstart: 2026-11-23T06:30\nsteps: []\nlaughs:\n" + bomb(indent: "  ")).write(toFile: path, atomically: true, encoding: .utf8)
        let catalog = try AppCatalog.load(path: AppCatalogTests.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)
        assertRefusedAsBomb({ _ = try Scenario.load(path: path, catalog: catalog, defaultTimeZone: TimeZone(identifier: "UTC")!) }, file: path, line: 5)
    }

    /// Aliases are fine as long as the expansion stays reasonable (the shipped products share plugin options so).
    func testModestAliasesStillWork() throws {
        let configuration = try ShieldBusConfiguration.parse(YAMLValue.parse("""
            name: shared
            plugins:
              - {name: a, executable: x, role: generic, options: &shared {product: habit-lock, n: 3}}
              - {name: b, executable: x, role: generic, options: *shared}
            """, file: "shared.yml"))
        XCTAssertEqual(configuration.plugins.map(\.options), [["product": "habit-lock", "n": 3], ["product": "habit-lock", "n": 3]])
    }

    /// The limit is exact: a document of exactly the limit's values is read, one more is refused. An anchored list
    /// of 100 values repeated through aliases keeps the text far smaller than the limit.
    func testExpansionLimitIsExact() throws {
        let limit = YAMLValue.maximumExpandedValues
        // The root mapping, keys `a` and `b`, the anchored list (1 + 99 scalars), `b`'s list: 104 values, then 100
        // per alias and 1 per plain scalar.
        func document(values: Int) -> String {
            let aliases = (values - 104) / 100, scalars = (values - 104) % 100
            let items = Array(repeating: "*x", count: aliases) + Array(repeating: "s", count: scalars)
            return "a: &x [" + Array(repeating: "s", count: 99).joined(separator: ",") + "]\nb: [" + items.joined(separator: ",") + "]\n"
        }
        XCTAssertLessThan(document(values: limit + 1).utf8.count, limit)
        XCTAssertNoThrow(try YAMLValue.parse(document(values: limit), file: "fits.yml"))
        XCTAssertThrowsError(try YAMLValue.parse(document(values: limit + 1), file: "over.yml"))
    }

    /// A long file without aliases is no bomb, however many values it holds: the generated heavy-user year of the
    /// benchmark (365 days, about 300,000 values) was refused as one.
    func testALongFileWithoutAliasesIsRead() throws {
        let values = 3 * YAMLValue.maximumExpandedValues
        let text = "steps:\n" + String(repeating: "  - {at: x}\n", count: values / 3)
        let parsed = try YAMLValue.parse(text, file: "long.yml")
        XCTAssertEqual(try parsed.mapping()["steps"]?.list().count, values / 3)
    }

    func testDeeplyNestedBlocksAreRefusedNotACrash() {
        let compact = "a:\n" + String(repeating: "- ", count: 100_000) + "x\n"
        XCTAssertThrowsError(try YAMLValue.parse(compact, file: "deep.yml")) { error in
            XCTAssertEqual((error as? ConfigurationError)?.line, 2)
        }
    }

    func testDeeplyNestedFlowIsRefusedNotACrash() {
        let deep = "a: " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "\n"
        XCTAssertThrowsError(try YAMLValue.parse(deep, file: "deep.yml")) { error in
            XCTAssertEqual((error as? ConfigurationError)?.file, "deep.yml")
            XCTAssertEqual((error as? ConfigurationError)?.line, 1)
        }
        // Brackets inside quotes are text, not nesting.
        let quoted = "a: \"" + String(repeating: "[", count: 1_000) + "\"\nb: '" + String(repeating: "{", count: 1_000) + "'\n"
        XCTAssertNoThrow(try YAMLValue.parse(quoted, file: "quoted.yml"))
    }
}
