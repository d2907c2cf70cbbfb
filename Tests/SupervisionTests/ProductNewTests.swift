import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// `shieldbus plugin new --product`: a renamed copy of the shipped Bedtime — its files, its targets, a configuration,
/// catalog and scenario that load — in a package holding only what the command reads (fast); in the slow lane, the
/// product built, played and explored in a copy of the whole package.
final class ProductNewTests: XCTestCase {
    static let root = BuildProducts.repositoryRoot.path

    /// A package with the template product and a Package.swift whose targets list has the marker.
    func package() throws -> TemporaryDirectory {
        let folder = TemporaryDirectory(prefix: "sbprod")
        for path in ["Plugins/Bedtime", "Plugins/BedtimeKit", "Plugins/BedtimeExtensions", "Config/scenarios"] {
            try FileManager.default.createDirectory(atPath: folder.file(path), withIntermediateDirectories: true)
        }
        for path in ["Plugins/Bedtime", "Plugins/BedtimeKit", "Plugins/BedtimeExtensions"] {
            for file in try FileManager.default.contentsOfDirectory(atPath: Self.root + "/" + path) {
                try FileManager.default.copyItem(atPath: Self.root + "/\(path)/\(file)", toPath: folder.file("\(path)/\(file)"))
            }
        }
        for path in ["Config/bedtime.yml", "Config/scenarios/bedtime-night.yml"] {
            try FileManager.default.copyItem(atPath: Self.root + "/" + path, toPath: folder.file(path))
        }
        try "let targets = [\n    \(PluginNewTests.marker)\n]\n".write(toFile: folder.file("Package.swift"), atomically: true, encoding: .utf8)
        return folder
    }

    func testItWritesAWholeProductRenamedWithoutTheTwinsFlaw() throws {
        let folder = try package()
        let run = try CommandRun.shieldbus(["plugin", "new", "--product", "wind-down", "--package-path", folder.path])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("swift build --product wind-down"), run.output)
        XCTAssertTrue(run.output.contains("shieldbus explore --config Config/wind-down.yml --days 100"), run.output)

        let swiftFiles = ["Plugins/WindDownKit/WindDown.swift", "Plugins/WindDown/main.swift", "Plugins/WindDownExtensions/WindDownMonitor.swift",
                          "Plugins/WindDownExtensions/WindDownShield.swift", "Plugins/WindDownExtensions/WindDownAction.swift",
                          "Plugins/WindDownExtensions/WindDownApp.swift", "Plugins/WindDownExtensions/WindDownPlugin.swift"]
        for path in swiftFiles {
            let text = try String(contentsOfFile: folder.file(path), encoding: .utf8)
            XCTAssertFalse(text.contains("Bedtime") || text.contains("bedtime"), "\(path) still names the template: \(text)")
            XCTAssertFalse(text.lowercased().contains("flaw"), "\(path) keeps the naive twin's flaw: \(text)")
        }
        let kit = try String(contentsOfFile: folder.file("Plugins/WindDownKit/WindDown.swift"), encoding: .utf8)
        XCTAssertTrue(kit.contains(#"public static let product = MonitoredProduct(name: "wind-down", group: "group.dev.shieldbus.wind-down")"#), kit)
        let main = try String(contentsOfFile: folder.file("Plugins/WindDown/main.swift"), encoding: .utf8)
        XCTAssertTrue(main.contains("import WindDownExtensions\n") && main.hasSuffix("PluginHost.run(WindDownPlugin.program)\n"), main)
        let program = try String(contentsOfFile: folder.file("Plugins/WindDownExtensions/WindDownPlugin.swift"), encoding: .utf8)
        XCTAssertTrue(program.contains(#""WindDownMonitor": WindDownMonitor.init,"#), program)
        let shield = try String(contentsOfFile: folder.file("Plugins/WindDownExtensions/WindDownShield.swift"), encoding: .utf8)
        XCTAssertTrue(shield.contains(#"title: ShieldConfiguration.Label(text: "Wind Down", color: .white)"#), "the person reads the display name: \(shield)")
        XCTAssertTrue(shield.contains("let left = passesLeft()\n"), shield)
        let action = try String(contentsOfFile: folder.file("Plugins/WindDownExtensions/WindDownAction.swift"), encoding: .utf8)
        XCTAssertTrue(action.contains("guard used < WindDown.passesPerNight else { return false }"), action)
        XCTAssertTrue(action.contains("import Foundation\nimport ManagedSettings\nimport MonitorKit\nimport ShieldBusSDK\nimport WindDownKit\n"), action)

        let manifest = try String(contentsOfFile: folder.file("Package.swift"), encoding: .utf8)
        XCTAssertTrue(manifest.contains(#".target(name: "WindDownKit", dependencies: ["#), manifest)
        XCTAssertTrue(manifest.contains(#".target(name: "WindDownExtensions", dependencies: ["#) &&
                      manifest.contains(#""MonitorKit", "WindDownKit"], path: "Plugins/WindDownExtensions", "#), manifest)
        XCTAssertTrue(manifest.contains(#".executableTarget(name: "wind-down", dependencies: ["#) &&
                      manifest.contains(#""WindDownExtensions"], path: "Plugins/WindDown", "#), manifest)
        XCTAssertTrue(manifest.contains(#"path: "Plugins/WindDown", "#) && manifest.contains("\n    \(PluginNewTests.marker)\n"), manifest)

        // The configuration, its catalog (added to the shipped one) and its scenario load and agree.
        let configuration = try ShieldBusConfiguration.load(path: folder.file("Config/wind-down.yml"))
        let catalog = try AppCatalog.load(path: folder.file("Config/wind-down-apps.yml"), extending: AppCatalog.load(path: Self.root + "/Config/catalog.yml"))
        XCTAssertEqual(configuration.catalog.map(configuration.resolve), folder.file("Config/wind-down-apps.yml"))
        try configuration.validateReferences(catalog: catalog)
        XCTAssertEqual(catalog.app(named: "Wind Down")?.bundleIdentifier, "com.example.winddown")
        XCTAssertEqual(configuration.plugins.map { $0.environment["SHIELDBUS_PRINCIPAL_CLASS"] }, ["WindDownMonitor", "WindDownShield", "WindDownAction", "WindDownApp"])
        XCTAssertEqual(Set(configuration.plugins.map(\.appGroup)), ["group.dev.shieldbus.wind-down"])
        XCTAssertNotNil(configuration.promise, "the product declares its promise")
        let scenario = try Scenario.load(path: folder.file("Config/scenarios/wind-down-night.yml"), catalog: catalog, defaultTimeZone: TimeZone(identifier: "UTC")!)
        XCTAssertFalse(scenario.expectations.isEmpty, "the scenario has probes")
    }

    /// A name holding the template's ("bedtime-lite", "flawless") is renamed once, and nothing of it is taken for the
    /// template's own words.
    func testANameHoldingTheTemplatesIsRenamedOnce() throws {
        let folder = try package()
        for product in ["bedtime-lite", "flawless"] {
            let run = try CommandRun.shieldbus(["plugin", "new", "--product", product, "--package-path", folder.path])
            XCTAssertEqual(run.status, 0, run.errors)
        }
        let shield = try String(contentsOfFile: folder.file("Plugins/BedtimeLiteExtensions/BedtimeLiteShield.swift"), encoding: .utf8)
        XCTAssertTrue(shield.contains("import BedtimeLiteKit\n") && shield.contains("final class BedtimeLiteShield: ShieldConfigurationDataSource"), shield)
        XCTAssertTrue(shield.contains(#"Label(text: "Bedtime Lite", color: .white)"#), shield)
        let configuration = try String(contentsOfFile: folder.file("Config/bedtime-lite.yml"), encoding: .utf8)
        XCTAssertTrue(configuration.contains("principalClass: BedtimeLiteMonitor}") && configuration.contains("companionApp: Bedtime Lite\n"), configuration)
        XCTAssertTrue(configuration.contains("group.dev.shieldbus.bedtime-lite,"), configuration)
        let monitor = try String(contentsOfFile: folder.file("Plugins/FlawlessExtensions/FlawlessMonitor.swift"), encoding: .utf8)
        XCTAssertTrue(monitor.contains("final class FlawlessMonitor: ChainedMonitor"), monitor)
    }

    func testMistakesChangeNothingAndSayWhatToDo() throws {
        let folder = try package()
        let before = try String(contentsOfFile: folder.file("Package.swift"), encoding: .utf8)
        let cases: [([String], String)] = [
            (["--product", "bedtime"], "Plugins/Bedtime already exists; choose another name"),
            (["--product", "focus-window"], "already has an app named 'Focus Window' (the product's companion app); choose another name"),
            (["--product", "Wind Down"], "'Wind Down' cannot name a plugin"),
            (["--product", "date"], "'date' cannot name a plugin: its type `Date` would hide the `Date` the product's code uses"),
            (["--product", "app"], "its type `App` would hide the `App` the product's code uses"),
            (["--product", "wind-down", "--directory", "Extensions"], "--directory is for a plugin"),
            (["--product", "wind-down", "--kind", "monitor"], "--product makes a whole product: give it alone"),
            (["wind-down"], "say which kind of plugin with --kind"),
            ([], "name the plugin (shieldbus plugin new NAME --kind KIND), or a product (--product NAME)"),
        ]
        for (arguments, message) in cases {
            let run = try CommandRun.shieldbus(["plugin", "new"] + arguments + ["--package-path", folder.path])
            XCTAssertNotEqual(run.status, 0, "\(arguments)")
            XCTAssertTrue(run.errors.contains(message), "\(arguments): \(run.errors)")
        }
        XCTAssertEqual(try String(contentsOfFile: folder.file("Package.swift"), encoding: .utf8), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.file("Plugins")).sorted(), ["Bedtime", "BedtimeExtensions", "BedtimeKit"])

        let empty = TemporaryDirectory(prefix: "sbprod")
        try "let targets = [\n    \(PluginNewTests.marker)\n]\n".write(toFile: empty.file("Package.swift"), atomically: true, encoding: .utf8)
        let run = try CommandRun.shieldbus(["plugin", "new", "--product", "wind-down", "--package-path", empty.path])
        XCTAssertTrue(run.errors.contains("a product is made from the shipped Bedtime; run this in the ShieldBus package"), run.errors)
        XCTAssertFalse(FileManager.default.fileExists(atPath: empty.file("Config")), "nothing is written without the template")
    }

    // MARK: Slow: a real build

    /// As the printed steps say, in a copy of this package: the product builds with one command, its two nights hold
    /// with every probe, and explore finds nothing on a few generated days.
    func testTheNewProductBuildsHoldsItsNightsAndExplores() throws {
        try XCTSkipUnless(SlowLane.isOn, "a full build of a copy of the package: in the slow lane (make test-slow)")
        let copy = try PluginNewTests.copyOfThePackage()
        let made = try CommandRun.shieldbus(["plugin", "new", "--product", "wind-down"], directory: copy.path)
        XCTAssertEqual(made.status, 0, made.errors)
        for product in ["shieldbus", "wind-down"] {
            let build = try CommandRun.run("/usr/bin/env", ["swift", "build", "--product", product], directory: copy.path, timeoutSeconds: 2400)
            XCTAssertEqual(build.status, 0, String((build.output + build.errors).suffix(4000)))
        }
        let shieldbus = copy.file(".build/debug/shieldbus")
        let nights = try CommandRun.run(shieldbus, ["run", "--config", "Config/wind-down.yml", "--runtime-dir", copy.file("run")], directory: copy.path, timeoutSeconds: 300)
        XCTAssertEqual(nights.status, 0, nights.output + nights.errors)
        XCTAssertTrue(nights.output.contains("lock invariant    held (wind-down)") && nights.output.contains("expectations      7 held"), nights.output)
        let explored = try CommandRun.run(shieldbus, ["explore", "--config", "Config/wind-down.yml", "--days", "2", "--seed", "3", "--profile", "both"],
                                          directory: copy.path, timeoutSeconds: 600)
        XCTAssertEqual(explored.status, 0, explored.output + explored.errors)
        XCTAssertTrue(explored.output.contains("explored 4 day(s)"), explored.output)
    }
}
