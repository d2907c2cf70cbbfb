import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// `shieldbus plugin new`: the files it writes and its Package.swift edit (fast), and — with
/// SHIELDBUS_SLOW_TESTS=1 — a full build of every kind in a copy of the package, whose generated tests then run
/// the new plugins against the real broker.
final class PluginNewTests: XCTestCase {
    static let marker = "// shieldbus plugin new: new plugins go above this line"

    /// A package folder holding only a Package.swift with `targets` lines.
    func package(targets: String) throws -> TemporaryDirectory {
        let folder = TemporaryDirectory(prefix: "sbpkg")
        try "// swift-tools-version:5.10\nimport PackageDescription\n\nlet package = Package(\n    name: \"P\",\n    targets: [\n\(targets)    ]\n)\n"
            .write(toFile: folder.file("Package.swift"), atomically: true, encoding: .utf8)
        return folder
    }

    func testItWritesThePluginItsTestAndTheTargets() throws {
        let folder = try package(targets: "        .target(name: \"Existing\"),\n        \(Self.marker)\n")
        let run = try CommandRun.shieldbus(["plugin", "new", "focus-shield", "--kind", "shield", "--package-path", folder.path])
        XCTAssertEqual(run.status, 0, run.errors)

        let main = try String(contentsOfFile: folder.file("Plugins/focus-shield/main.swift"), encoding: .utf8)
        XCTAssertTrue(main.hasPrefix("// focus-shield: a shield configuration extension"), main)
        XCTAssertTrue(main.contains("final class FocusShieldPlugin: ShieldConfigurationDataSource {"), main)
        XCTAssertTrue(main.hasSuffix("PluginHost.run(principalClasses: [\"FocusShieldPlugin\": FocusShieldPlugin.init])\n"), main)
        XCTAssertTrue(main.contains("import ManagedSettingsUI\n") && main.contains("import UIKit\n"), "Apple's imports, as the iOS extension has them: \(main)")
        XCTAssertTrue(main.contains("\ntypealias UserDefaults = AppGroupUserDefaults\n"), "App Groups behind UserDefaults: \(main)")
        XCTAssertFalse(main.contains("__"), "every placeholder is filled: \(main)")
        let test = try String(contentsOfFile: folder.file("Tests/FocusShieldTests/FocusShieldTests.swift"), encoding: .utf8)
        XCTAssertTrue(test.contains("final class FocusShieldTests: XCTestCase {"), test)
        XCTAssertTrue(test.contains(#"- {name: focus-shield, executable: \(BuildProducts.path("focus-shield")), role: shield}"#), test)
        XCTAssertFalse(test.contains("__"), test)

        let manifest = try String(contentsOfFile: folder.file("Package.swift"), encoding: .utf8)
        XCTAssertTrue(manifest.contains("""
                    .target(name: "Existing"),
                    .executableTarget(name: "focus-shield", dependencies: ["ShieldBusSDK", "BusProtocol", "ManagedSettings", "ManagedSettingsUI", "DeviceActivity", "FamilyControls", "ShieldBusUIKit", "ShieldBusOS", "ShieldBusUserNotifications"], path: "Plugins/focus-shield", swiftSettings: [.unsafeFlags(["-module-alias", "UIKit=ShieldBusUIKit", "-module-alias", "os=ShieldBusOS", "-module-alias", "UserNotifications=ShieldBusUserNotifications"])]),
                    .testTarget(name: "FocusShieldTests", dependencies: ["BusProtocol", "ShieldBusTestSupport", "focus-shield"], path: "Tests/FocusShieldTests"),
                    \(Self.marker)
            """), manifest)

        XCTAssertTrue(run.output.contains("""
            plugins:
              - name: focus-shield
                executable: focus-shield      # the built product, found next to shieldbus
                role: shield
            """), run.output)
        XCTAssertTrue(run.output.contains("swift build --product focus-shield"), run.output)
        XCTAssertTrue(run.output.contains("shieldbus tap shield."), run.output)
    }

    func testEveryKindUsesItsSDKClassAndRole() throws {
        let classes = ["monitor": "DeviceActivityMonitor", "shield": "ShieldConfigurationDataSource", "action": "ShieldActionDelegate",
                       "notifier": "BusPlugin", "report": "BusPlugin", "app": "App", "generic": "BusPlugin"]
        let folder = try package(targets: "        \(Self.marker)\n")
        for (kind, sdkClass) in classes {
            let run = try CommandRun.shieldbus(["plugin", "new", "my-\(kind)", "--kind", kind, "--directory", "Extensions", "--package-path", folder.path])
            XCTAssertEqual(run.status, 0, run.errors)
            let main = try String(contentsOfFile: folder.file("Extensions/my-\(kind)/main.swift"), encoding: .utf8)
            XCTAssertTrue(main.contains(": \(sdkClass) {"), "\(kind): \(main)")
            if sdkClass == "BusPlugin" && kind != "generic" { XCTAssertTrue(main.contains("override var role: Role { .\(kind) }"), main) }
            let test = try String(contentsOfFile: folder.file("Tests/My\(kind.capitalized)Tests/My\(kind.capitalized)Tests.swift"), encoding: .utf8)
            XCTAssertTrue(test.contains("role: \(kind)}"), test)
        }
        let manifest = try String(contentsOfFile: folder.file("Package.swift"), encoding: .utf8)
        XCTAssertEqual(manifest.components(separatedBy: "path: \"Extensions/").count - 1, classes.count, manifest)
    }

    func testMistakesChangeNothingAndSayWhatToDo() throws {
        let folder = try package(targets: "        .target(name: \"taken\"),\n        \(Self.marker)\n")
        let before = try String(contentsOfFile: folder.file("Package.swift"), encoding: .utf8)
        let cases: [([String], String)] = [
            (["Focus Shield", "--kind", "shield"], "'Focus Shield' cannot name a plugin: it may contain only lowercase ASCII letters a-z, digits 0-9 and '-'"),
            (["9lives", "--kind", "shield"], "'9lives' cannot name a plugin: it must start with a lowercase letter"),
            (["focus_shield", "--kind", "shield"], "it may contain only lowercase ASCII letters a-z, digits 0-9 and '-'"),
            (["brоker", "--kind", "shield"], "it may contain only lowercase ASCII letters a-z, digits 0-9 and '-'"),
            (["broker", "--kind", "generic"], "'broker' cannot name a plugin: it is reserved"),
            (["taken", "--kind", "generic"], "already has a target named 'taken'; choose another name"),
            (["fine", "--kind", "wizard"], "The value 'wizard' is invalid for '--kind <kind>'"),
        ]
        for (arguments, message) in cases {
            let run = try CommandRun.shieldbus(["plugin", "new"] + arguments + ["--package-path", folder.path])
            XCTAssertNotEqual(run.status, 0, "\(arguments)")
            XCTAssertTrue(run.errors.contains(message), "\(arguments): \(run.errors)")
        }
        XCTAssertEqual(try String(contentsOfFile: folder.file("Package.swift"), encoding: .utf8), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.file("Plugins")))

        let unmarked = try package(targets: "        .target(name: \"A\"),\n")
        let run = try CommandRun.shieldbus(["plugin", "new", "fine", "--kind", "generic", "--package-path", unmarked.path])
        XCTAssertTrue(run.errors.contains("has no line `\(Self.marker)` in its targets list; add it before the list's closing `]`"), run.errors)
        XCTAssertFalse(FileManager.default.fileExists(atPath: unmarked.file("Plugins/fine")), "nothing is written without the marker")
    }

    func testTheRepositoryPackageHasTheMarker() throws {
        let manifest = try String(contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        XCTAssertTrue(manifest.contains(Self.marker))
    }

    // MARK: Slow: a real build

    /// A copy of this package's sources, to add to and build.
    static func copyOfThePackage() throws -> TemporaryDirectory {
        let copy = TemporaryDirectory(prefix: "sbcopy")
        let root = BuildProducts.repositoryRoot.path
        let parts = ["Package.swift", "Package.resolved", "Sources", "Plugins", "Tests", "Benchmarks", "Config"].filter {
            FileManager.default.fileExists(atPath: "\(root)/\($0)")
        }
        let copied = try CommandRun.run("/bin/cp", ["-R"] + parts.map { "\(root)/\($0)" } + [copy.path])
        XCTAssertEqual(copied.status, 0, copied.errors)
        return copy
    }

    /// Every kind, created in a copy of this package, builds; the generic one runs under the broker; and every
    /// generated test passes there as generated.
    func testEveryKindBuildsAndItsGeneratedTestPassesInACopyOfThePackage() throws {
        try XCTSkipUnless(SlowLane.isOn, "a full build of a copy of the package: in the slow lane (make test-slow)")
        let copy = try Self.copyOfThePackage()
        let kinds = ["monitor", "shield", "action", "notifier", "report", "app", "generic"]
        for kind in kinds {
            let made = try CommandRun.shieldbus(["plugin", "new", "probe-\(kind)", "--kind", kind], directory: copy.path)
            XCTAssertEqual(made.status, 0, made.errors)
        }

        // As the printed steps say: build the product, and the broker runs it from a configuration entry.
        let swift = "/usr/bin/env"
        let product = try CommandRun.run(swift, ["swift", "build", "--product", "probe-generic"], directory: copy.path, timeoutSeconds: 1200)
        XCTAssertEqual(product.status, 0, product.output + product.errors)
        let plugin = copy.file(".build/debug/probe-generic")
        let broker = try BrokerProcess(configuration: "name: probe\nplugins:\n  - {name: probe-generic, executable: \(plugin), role: generic}\n")
        let tester = try broker.connect(name: "probe-tester", subscriptions: ["app.probe-generic."])
        waitUntil("probe-generic to connect") {
            (try? broker.status())?["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == "probe-generic" }?["connected"]?.boolValue == true
        }
        try tester.publish(Publish(topic: "app.probe-generic.ping", body: [:]))
        let events = try collectEvents(from: tester) { $0.contains { $0.topic == "app.probe-generic.pong" } }
        XCTAssertTrue(events.contains { $0.topic == "app.probe-generic.pong" && $0.source == "probe-generic" }, "\(events)")
        XCTAssertEqual(broker.stop(), 0, broker.log())

        // The generated tests, as generated, against the copy's own broker.
        let build = try CommandRun.run(swift, ["swift", "build", "--build-tests"], directory: copy.path, timeoutSeconds: 2400)
        XCTAssertEqual(build.status, 0, String((build.output + build.errors).suffix(4000)))
        let filter = kinds.map { "Probe\($0.capitalized)Tests" }.joined(separator: "|")
        let tests = try CommandRun.run(swift, ["swift", "test", "--skip-build", "--filter", filter], directory: copy.path, timeoutSeconds: 600)
        XCTAssertEqual(tests.status, 0, String((tests.output + tests.errors).suffix(4000)))
        XCTAssertTrue((tests.output + tests.errors).contains("Executed 10 tests, with 0 failures"), String((tests.output + tests.errors).suffix(4000)))
    }
}
