@testable import Broker
import Foundation
import XCTest

/// Which programs can serve as a launch template: found by their ELF section headers, wherever in the file they are.
final class LaunchTemplateDetectionTests: XCTestCase {
    /// A sparse ELF file whose section headers start at `offset` and name `sections`.
    func program(sectionHeadersAt offset: UInt64, naming sections: [String]) throws -> String {
        let path = NSTemporaryDirectory() + "elf-\(UUID().uuidString)"
        var names: [UInt8] = [0]
        for name in sections { names += Array(name.utf8) + [0] }
        func bytes(_ value: UInt64, _ width: Int) -> [UInt8] { (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
        var header = [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1] + [UInt8](repeating: 0, count: 64 - 7)
        header.replaceSubrange(0x28..<0x30, with: bytes(offset, 8))  // e_shoff
        header.replaceSubrange(0x3A..<0x3C, with: bytes(64, 2))  // e_shentsize
        header.replaceSubrange(0x3C..<0x3E, with: bytes(2, 2))  // e_shnum
        header.replaceSubrange(0x3E..<0x40, with: bytes(1, 2))  // e_shstrndx: the second
        var table = [UInt8](repeating: 0, count: 128)
        table.replaceSubrange(64 + 0x18..<64 + 0x20, with: bytes(offset + 128, 8))  // its sh_offset: after the table
        table.replaceSubrange(64 + 0x20..<64 + 0x28, with: bytes(UInt64(names.count), 8))
        FileManager.default.createFile(atPath: path, contents: Data(header))
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try file.seek(toOffset: offset)
        try file.write(contentsOf: Data(table + names))
        try file.close()
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    func testAProgramWithTheSectionCanServeEvenWithItsHeadersPastSixtyFourMegabytes() throws {
        XCTAssertTrue(LaunchTemplate.canServe(executable: try program(sectionHeadersAt: 4096, naming: [".text", "shieldbus_launch_template"])))
        XCTAssertTrue(LaunchTemplate.canServe(executable: try program(sectionHeadersAt: 90 << 20, naming: ["shieldbus_launch_template", ".bss"])),
                      "a static release program's section headers lie at its end, past 64 MB")
        XCTAssertFalse(LaunchTemplate.canServe(executable: try program(sectionHeadersAt: 4096, naming: [".text", "shieldbus_launch_templates"])))
        XCTAssertFalse(LaunchTemplate.canServe(executable: "/usr/bin/env"), "a program without the SDK")
        let script = NSTemporaryDirectory() + "script-\(UUID().uuidString)"
        try "#!/bin/sh\n# shieldbus_launch_template\n".write(toFile: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        XCTAssertFalse(LaunchTemplate.canServe(executable: script), "a script is not an ELF program")
    }

    /// A sandboxed template tells the Swift runtime, which reads its variables before any launch, that no crash
    /// backtracer is to be found (sparing each launch its search); a plugin's own setting is kept, and an unsandboxed
    /// template, which could find one, is told nothing.
    func testASandboxedTemplateTellsTheRuntimeThereIsNoBacktracerUnlessThePluginSaysOtherwise() {
        let plugin = ["SHIELDBUS_PLUGIN_NAME": "monitor"]
        let sandboxed = LaunchTemplate.environment(plugin, sandboxed: true, kept: false)
        XCTAssertEqual(sandboxed["SWIFT_BACKTRACE"], "enable=no,swift-backtrace=")
        XCTAssertEqual(sandboxed["SHIELDBUS_PLUGIN_NAME"], "monitor")
        XCTAssertNotNil(sandboxed[LaunchTemplate.channelVariable])
        XCTAssertNil(sandboxed[LaunchTemplate.keptVariable])
        XCTAssertEqual(LaunchTemplate.environment(plugin, sandboxed: true, kept: true)[LaunchTemplate.keptVariable], "1")
        let asked = LaunchTemplate.environment(["SWIFT_BACKTRACE": "enable=yes"], sandboxed: true, kept: false)
        XCTAssertEqual(asked["SWIFT_BACKTRACE"], "enable=yes")
        XCTAssertNil(LaunchTemplate.environment(plugin, sandboxed: false, kept: false)["SWIFT_BACKTRACE"])
    }

    /// A template's loader binds every symbol of the shared libraries the program calls when the template starts, so
    /// that no launch binds them again; a plugin's own setting is kept, and the launch's environment (sent per launch)
    /// is not the template's.
    func testATemplateBindsItsSymbolsAtItsStartUnlessThePluginSaysOtherwise() {
        let plugin = ["SHIELDBUS_PLUGIN_NAME": "monitor"]
        XCTAssertEqual(LaunchTemplate.environment(plugin, sandboxed: true, kept: false)["LD_BIND_NOW"], "1")
        XCTAssertEqual(LaunchTemplate.environment(plugin, sandboxed: false, kept: true)["LD_BIND_NOW"], "1")
        XCTAssertEqual(LaunchTemplate.environment(["LD_BIND_NOW": ""], sandboxed: true, kept: false)["LD_BIND_NOW"], "",
                       "the plugin's own setting")
    }
}
