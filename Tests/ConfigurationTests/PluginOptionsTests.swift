import Configuration
import XCTest

/// The reference plugins' options are checked at load like the rest of the configuration: a mistyped key is
/// refused with its file, line, key and a suggestion, for every reference plugin.
final class PluginOptionsTests: XCTestCase {
    func assertRefused(executable: String, options: String, line: Int, key: String, suggestion: String,
                       file: StaticString = #filePath, testLine: UInt = #line) {
        let text = "name: x\nplugins:\n  - name: p\n    executable: \(executable)\n    role: generic\n    options:\n\(options)"
        XCTAssertThrowsError(try ShieldBusConfiguration.parse(YAMLValue.parse(text, file: "test.yml")), file: file, line: testLine) { error in
            guard let error = error as? ConfigurationError else { return XCTFail("\(error)", file: file, line: testLine) }
            XCTAssertEqual(error.file, "test.yml", file: file, line: testLine)
            XCTAssertEqual(error.line, line, "\(error)", file: file, line: testLine)
            XCTAssertEqual(error.key, key, "\(error)", file: file, line: testLine)
            XCTAssertTrue(error.description.contains("did you mean '\(suggestion)'"), error.description, file: file, line: testLine)
        }
    }

    func testAMistypedKeyIsRefusedForEveryReferencePlugin() {
        for product in ["activity-monitor", "shield-renderer", "action-delegate", "companion-app", "/opt/build/companion-app"] {
            assertRefused(executable: product, options: "      product: habit-lock\n      unlockMinuts: 1\n",
                          line: 8, key: "plugins[0].options.unlockMinuts", suggestion: "unlockMinutes")
        }
        assertRefused(executable: "report-builder", options: "      appGroup: g\n      retentionDay: 9\n",
                      line: 8, key: "plugins[0].options.retentionDay", suggestion: "retentionDays")
        assertRefused(executable: "notifier", options: "      appGroup: g\n      dedupMinute: 9\n",
                      line: 8, key: "plugins[0].options.dedupMinute", suggestion: "dedupMinutes")
        assertRefused(executable: "notifier", options: "      rules:\n        - {on: shield.shown, titel: Hi}\n",
                      line: 8, key: "plugins[0].options.rules[0].titel", suggestion: "title")
        assertRefused(executable: "notifier", options: "      quietHours: {start: \"22:00\", ends: \"07:00\"}\n",
                      line: 7, key: "plugins[0].options.quietHours.ends", suggestion: "end")
    }

    func testOtherPluginsOptionsAreTheirsToCheck() throws {
        let text = "name: x\nplugins:\n  - {name: p, executable: my-plugin, role: generic, options: {anything: 1}}\n"
        XCTAssertEqual(try ShieldBusConfiguration.parse(YAMLValue.parse(text, file: "test.yml")).plugins.first?.options, ["anything": 1])
    }
}
