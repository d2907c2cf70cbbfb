import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// The SDK's warm-up, which a plugin's launch template runs in its C constructor before it serves
/// (`LaunchTemplateWarmUp`, docs/architecture.md § 8): through a real template, and by the order in which a program's
/// constructors run, which is what makes it safe.
final class LaunchTemplateWarmUpTests: XCTestCase {
    private static let configuration = """
        name: warm-up
        timeZone: Europe/Berlin
        device: {companionApp: Habit Lock}
        plugins:
          - {name: monitor, executable: \(BuildProducts.path("fixture-memory-monitor")), role: monitor}

        """
    private static let day = "name: warm-up\nstart: 2026-11-23T06:30\nsteps: []\nend: day 1 09:30\n"

    /// Launches of a plugin whose template ran the warm-up are served by it (a template whose warm-up failed or
    /// started a thread refuses to serve, and each launch is then a plain one, its sandbox's first process), start
    /// with one thread and with the program's globals untouched by any handler, and hash with the seed their build draws where the template cannot hold it: a release
    /// program's runtime draws it after the template's constructor, in each launch; a debug build's shared runtime
    /// draws it as it loads, in the template, so that its launches share it. Executed launches each draw their own.
    func testLaunchesAfterTheWarmUpAreServedByTheTemplateAndHashWithTheSeedTheirBuildDraws() throws {
        let arguments = ["--profile", "ios-realistic", "--seed", "5"]
        let runs = try ScenarioRun.runAll([(Self.configuration, Self.day, arguments),
                                           (Self.configuration, Self.day, arguments + ["--plain-launches"])])
        for run in runs { XCTAssertEqual(run.exitStatus, 0, run.errors) }
        let (forked, plain) = (runs[0].events("app.test.memory"), runs[1].events("app.test.memory"))
        XCTAssertEqual(forked.count, 3, runs[0].errors)
        XCTAssertEqual(plain.count, 3, runs[1].errors)
        func values(_ key: String, _ events: [Envelope]) -> [Int64] { events.compactMap { $0.bodyValue[key]?.intValue } }

        let pids = values("pid", forked)
        XCTAssertEqual(pids.count, 3)
        XCTAssertTrue(pids.allSatisfy { $0 > 1 }, "served by the template after its warm-up, not launched plainly: \(pids)\n\(runs[0].errors)")
        XCTAssertEqual(Set(values("pid", plain)), [1], "a plain launch is its sandbox's first process: what tells the two apart")
        XCTAssertEqual(values("threadsAtMain", forked), [1, 1, 1], "a launch starts on the one thread it was forked on")
        // The warm-up names types only: no handler of the plugin ran in the template, and each launch's own instance
        // and globals start from nothing.
        XCTAssertEqual(values("seen", forked), [1, 1, 1], "each launch's extension instance handled its one callback")
        XCTAssertEqual(values("process", forked), [1, 1, 1], "no launch inherits a handler's count from the template or an earlier launch")
        // The C libraries' one-time set-up (SQLite's, libsodium's, OpenPGM's) is the template's: each launch finds it
        // made, and it leaves a launch no thread (above) and no descriptor (below).
        // (-1: this libzmq cannot tell; Debian's, which links libsodium and OpenPGM, can.)
        XCTAssertEqual(values("librariesSetUpAtMain", forked), [1, 1, 1], "each launch finds libzmq's libraries set up by its template")
        XCTAssertEqual(values("librariesSetUpAtMain", plain), [0, 0, 0], "an executed launch sets them up itself, at its first context")
        // A template starts with descriptors 0–5 taken (standard input and output, /dev/null where the sandbox's
        // descriptors would be, its channel at 5), so whatever it opened since would be numbered above 5; a launch
        // closes the channel, and keeps nothing above it.
        XCTAssertEqual(values("highestDescriptorAtMain", forked).count, 3)
        XCTAssertTrue(values("highestDescriptorAtMain", forked).allSatisfy { $0 < 5 }, "\(values("highestDescriptorAtMain", forked))")
        XCTAssertEqual(values("highestDescriptorAtMain", plain), [2, 2, 2], "an executed launch starts with its standard input and output only")

        let plainHashes = values("hash", plain)
        XCTAssertEqual(plainHashes.count, 3)
        XCTAssertEqual(Set(plainHashes).count, 3, "an executed process draws its own hashing seed: \(plainHashes)")
        let hashes = values("hash", forked)
        XCTAssertEqual(hashes.count, 3)
        let order = try InitializerOrder(program: BuildProducts.path("fixture-memory-monitor"))
        if order.position(of: "GlobalObjects") != nil {
            XCTAssertEqual(Set(hashes).count, 3, "the program's runtime draws the seed after the template's constructor, in each launch: \(hashes)")
        } else {
            XCTAssertEqual(Set(hashes).count, 1, "the shared runtime drew the seed in the template, before its warm-up: \(hashes)")
        }
    }

    /// This build's plugin programs: the runtime registers the program's type and conformance records
    /// (swiftrt's `swift_image_constructor`) before the template's constructor, which looks types up by them. The
    /// runtime's, Dispatch's and CoreFoundation's own constructors run either after it, in the program (a static
    /// standard library), or before any of the program's, in their shared libraries (a debug build).
    func testThisBuildsPluginRegistersItsImageBeforeTheTemplateAndRunsTheRuntimesConstructorsOnOneSide() throws {
        let order = try InitializerOrder(program: BuildProducts.path("fixture-memory-monitor"))
        let (image, template) = (order.position(of: "swift_image_constructor"), order.position(of: "serveLaunchesIfAsked"))
        XCTAssertNotNil(template, "the template's constructor: \(order.names)")
        XCTAssertLessThan(try XCTUnwrap(image, "\(order.names)"), try XCTUnwrap(template))
        let runtime = ["GlobalObjects", "setupStandardConcurrencyDescriptors", "_libdispatch_init", "__CFInitialize"]
        if order.position(of: "GlobalObjects") != nil {
            try assertRunAfterTheTemplate(runtime, in: order, "fixture-memory-monitor")
        } else {
            XCTAssertEqual(runtime.filter { order.position(of: $0) != nil }, [],
                           "a program with a shared runtime runs none of the runtime's constructors itself: \(order.names)")
        }
    }

    /// A release program (`make release`, static standard library): swiftrt's registration of the program's records,
    /// then the template's constructor, then the runtime's own (the hashing seed's, Concurrency's standard
    /// descriptors), Dispatch's and CoreFoundation's: the order the warm-up's rules rest on.
    func testAReleasePluginRunsTheTemplatesConstructorBetweenItsImagesRegistrationAndTheRuntimesConstructors() throws {
        let plugins = ["activity-monitor", "shield-renderer", "action-delegate", "companion-app", "report-builder", "notifier", "bedtime", "profiles"]
            .compactMap { plugin in
                (try? BuildProducts.currentRelease(plugin, builtFrom: ["Sources/CLaunchTemplate/launch_template.c"]).get()).map { (plugin, $0) }
            }
        guard !plugins.isEmpty else {
            throw XCTSkip("no current release plugin in .build/release to read (`make bench-build` builds them); only this build's order was checked")
        }
        for (plugin, path) in plugins {
            let order = try InitializerOrder(program: path)
            let (image, template) = (order.position(of: "swift_image_constructor"), order.position(of: "serveLaunchesIfAsked"))
            XCTAssertLessThan(try XCTUnwrap(image, "\(plugin): \(order.names)"), try XCTUnwrap(template, "\(plugin): \(order.names)"), plugin)
            try assertRunAfterTheTemplate(["GlobalObjects", "setupStandardConcurrencyDescriptors", "_libdispatch_init", "__CFInitialize"],
                                          in: order, plugin)
        }
    }

    private func assertRunAfterTheTemplate(_ constructors: [String], in order: InitializerOrder, _ program: String,
                                           file: StaticString = #filePath, line: UInt = #line) throws {
        let template = try XCTUnwrap(order.position(of: "serveLaunchesIfAsked"), "\(program): \(order.names)", file: file, line: line)
        for constructor in constructors {
            let position = try XCTUnwrap(order.position(of: constructor), "\(program) runs no \(constructor): \(order.names)", file: file, line: line)
            XCTAssertGreaterThan(position, template, "\(program): \(constructor) runs after the template's constructor", file: file, line: line)
        }
    }
}
