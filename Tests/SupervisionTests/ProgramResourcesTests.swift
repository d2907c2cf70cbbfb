import Foundation
import ShieldBusSDK
import ShieldBusTestSupport
import XCTest

/// A plugin program's resource bundle (`<Package>_<Target>.resources`) is looked for beside the program, and a
/// missing one is a configuration error saying what to copy where — not `Bundle.module` stopping every launch.
final class ProgramResourcesTests: XCTestCase {
    func testTheBundleBesideTheProgramIsFoundAndAMissingOneIsAConfigurationErrorSayingWhatToCopy() throws {
        let program = TemporaryDirectory(prefix: "sbres")
        let folder = URL(fileURLWithPath: program.path)
        XCTAssertThrowsError(try ProgramResources.folder("Resources", inBundle: "Pkg_Target", programFolder: folder)) { error in
            XCTAssertEqual(PluginExitStatus.status(for: error), PluginExitStatus.configurationError, "not retried by the supervisor")
            XCTAssertEqual("\(error)", """
                the program's resource bundle is missing: \(program.path)/Pkg_Target.resources/Resources cannot be read (No such file or directory); \
                copy the Pkg_Target.resources folder from where the program was built (its build products, e.g. .build/release/) \
                beside the program, into \(program.path)/
                """)
        }
        // A bundle without the folder asked for is as missing.
        try FileManager.default.createDirectory(atPath: program.file("Pkg_Target.resources"), withIntermediateDirectories: true)
        XCTAssertThrowsError(try ProgramResources.folder("Resources", inBundle: "Pkg_Target", programFolder: folder))
        try FileManager.default.createDirectory(atPath: program.file("Pkg_Target.resources/Resources"), withIntermediateDirectories: true)
        XCTAssertEqual(try ProgramResources.folder("Resources", inBundle: "Pkg_Target", programFolder: folder).path,
                       program.path + "/Pkg_Target.resources/Resources")
    }

    /// The program's folder is found where `Bundle.main` finds it, without making the main bundle.
    func testTheRunningProgramsFolderIsTheMainBundles() {
        XCTAssertEqual(ProgramResources.runningProgramFolder(), Bundle.main.bundleURL.path)
    }

    /// The built shield renderer copied to a folder of its own without its bundle exits at once with a configuration
    /// error (the status its supervisor does not restart) naming the plugin, the missing bundle and what to copy;
    /// with the bundle copied beside it, it gets past its resources (and stops on the options it was not given).
    func testTheShieldRendererCopiedWithoutItsBundleIsRefusedAtLaunch() throws {
        let copy = TemporaryDirectory(prefix: "sbcopy")
        let program = copy.file("shield-renderer"), bundle = "ShieldBus_ShieldRendererExtension.resources"
        try FileManager.default.copyItem(atPath: BuildProducts.path("shield-renderer"), toPath: program)

        let alone = try CommandRun.run(program, [], environment: ["SHIELDBUS_PLUGIN_NAME": "shield"])
        XCTAssertEqual(alone.status, PluginExitStatus.configurationError, alone.errors)
        XCTAssertTrue(alone.errors.contains("plugin 'shield': the program's resource bundle is missing: \(copy.path)/\(bundle)/Resources cannot be read"), alone.errors)
        XCTAssertTrue(alone.errors.contains("copy the \(bundle) folder from where the program was built"), alone.errors)
        XCTAssertFalse(alone.errors.contains("could not load resource bundle"), alone.errors)

        try FileManager.default.copyItem(atPath: BuildProducts.directory.appendingPathComponent(bundle).path, toPath: copy.file(bundle))
        let beside = try CommandRun.run(program, [])
        XCTAssertEqual(beside.status, PluginExitStatus.configurationError, beside.errors)
        XCTAssertFalse(beside.errors.contains("resource bundle"), beside.errors)
        XCTAssertTrue(beside.errors.contains("started outside `shieldbus run`"), beside.errors)
    }
}
