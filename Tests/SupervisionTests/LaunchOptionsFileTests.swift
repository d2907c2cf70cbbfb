import BusProtocol
import Foundation
@testable import ShieldBusSDK
import XCTest

/// A launch reads its options file (`SHIELDBUS_PLUGIN_OPTIONS_FILE`) with POSIX calls: every byte of it, and a clear
/// configuration error when there is no file to read there.
final class LaunchOptionsFileTests: XCTestCase {
    private var folder: String!

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "/sboptions-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        LaunchEnvironment.hostsPlugins.withValue { $0 = true }
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    private func optionsBytes(at path: String) throws -> [UInt8] {
        try LaunchEnvironment.$hosted.withValue(["SHIELDBUS_PLUGIN_OPTIONS_FILE": path, "SHIELDBUS_PLUGIN_NAME": "monitor"]) {
            try PluginRuntime.launchOptionsBytes()
        }
    }

    func testEveryByteOfTheFileIsRead() throws {
        let path = folder + "/options.json"
        // Many pages long: read to its end, not one read.
        let written = Array("{\"appGroup\": \"group.dev.shieldbus.x\", \"note\": \"".utf8) + (0..<70_000).map { UInt8(32 + $0 % 90) } + Array("\"}".utf8)
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(written)))
        XCTAssertEqual(try optionsBytes(at: path), written)
        let empty = folder + "/empty.json"
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: Data()))
        XCTAssertEqual(try optionsBytes(at: empty), [])
    }

    private struct ReadOptions: JSONReadableOptions {
        let appGroup: String?
        init(json: JSONValue) throws { appGroup = json["appGroup"]?.stringValue }
    }

    private struct DecodedOptions: Decodable {
        let appGroup: String?
        let limits: [String: Int]?
    }

    /// An options file with a key written twice — at the top, or nested — is a configuration error naming the key,
    /// whether the plugin reads its options with the bus's reader or with `JSONDecoder` (which would keep the first).
    func testAnOptionsFileWithARepeatedKeyIsAConfigurationErrorNamingTheKey() throws {
        let path = folder + "/options.json"
        for (json, key) in [(#"{"appGroup":"group.a","appGroup":"group.b"}"#, "appGroup"),
                            (#"{"appGroup":"group.a","limits":{"daily":5,"weekly":9,"daily":7}}"#, "daily")] {
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(json.utf8)))
            try LaunchEnvironment.$hosted.withValue(["SHIELDBUS_PLUGIN_OPTIONS_FILE": path, "SHIELDBUS_PLUGIN_NAME": "monitor"]) {
                for read in [{ _ = try PluginRuntime.launchOptions(as: ReadOptions.self) }, { _ = try PluginRuntime.launchOptions(as: DecodedOptions.self) }] {
                    XCTAssertThrowsError(try read(), json) { error in
                        guard case PluginError.configuration(let message) = error else { return XCTFail("\(error)") }
                        XCTAssertTrue(message.contains("the options of plugin 'monitor'"), message)
                        XCTAssertTrue(message.contains("the key '\(key)' appears twice in one object"), message)
                    }
                }
            }
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(#"{"appGroup":"group.a","limits":{"daily":5}}"#.utf8)))
        try LaunchEnvironment.$hosted.withValue(["SHIELDBUS_PLUGIN_OPTIONS_FILE": path, "SHIELDBUS_PLUGIN_NAME": "monitor"]) {
            XCTAssertEqual(try PluginRuntime.launchOptions(as: ReadOptions.self).appGroup, "group.a")
            XCTAssertEqual(try PluginRuntime.launchOptions(as: DecodedOptions.self).limits, ["daily": 5])
        }
    }

    func testAMissingFileOrAFolderIsAConfigurationError() throws {
        for path in [folder + "/missing.json", folder!] {
            XCTAssertThrowsError(try optionsBytes(at: path), path) { error in
                guard case PluginError.configuration(let message) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("cannot read the plugin's options file \(path)"), message)
            }
        }
    }
}
