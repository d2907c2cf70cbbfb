@testable import Broker
import BusClient
import Foundation
import ShieldBusTestSupport
import XCTest

/// A process forked from a template — a plugin's launch, an explored day — forgets the thread ids its Swift runtime and
/// libdispatch kept for its template's thread (`shieldbus_forget_thread_ids`): a second thread that meets its main thread
/// on one of their locks — a global's first use (swift_once), Synchronization's Mutex, from a thread of its own or a
/// block on `DispatchQueue.global()`, libdispatch's lock of a queue's specific values — goes on, and its main queue is
/// still its main thread's (a block run there with `sync`, drained by the main run loop). The child of a plain fork
/// spins there for ever, or traps.
final class ForkedThreadIdsTests: XCTestCase {
    private static let meetings = ["once", "mutex", "dispatch", "specifics", "main-queue"]

    func testAChildThatForgetsItsThreadIdsGoesOnWhereverItsThreadsMeet() throws {
        for meeting in Self.meetings {
            XCTAssertEqual(try forkAndMeet(forgetting: true, meeting, deadlineMilliseconds: 60_000), "finished", meeting)
        }
    }

    /// What the templates' children did before they forgot: the lock's word names the template's thread, so the kernel
    /// queues the other thread behind the template and refuses the main thread's unlock as not the owner's.
    func testAPlainForksChildSpinsForEverOrTrapsWhereItsThreadsMeet() throws {
        XCTAssertEqual(try forkAndMeet(forgetting: false, "once", deadlineMilliseconds: 3_000), "hung", "the runtime's unlock retries for ever")
        XCTAssertEqual(try forkAndMeet(forgetting: false, "dispatch", deadlineMilliseconds: 3_000), "hung")
        let mutex = try forkAndMeet(forgetting: false, "mutex", deadlineMilliseconds: 3_000)
        XCTAssertTrue(mutex.hasPrefix("trapped"), "Synchronization's unlock traps on the refusal: \(mutex)")
        let specifics = try forkAndMeet(forgetting: false, "specifics", deadlineMilliseconds: 3_000)
        XCTAssertTrue(specifics.hasPrefix("trapped"), "libdispatch traps on the kernel's refusal of its lock: \(specifics)")
    }

    /// A process where libdispatch started a thread of its own cannot give a forked child usable queues (libdispatch's
    /// fork hook marks them unusable there): finding its thread ids refuses, so no template forks it.
    func testAProcessWhoseLibdispatchStartedThreadsIsNotForked() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("fixture-forked-threads"))
        process.arguments = ["--find-after-dispatch-threads"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // One line: it fits the pipe, so the fixture ends without its being read.
        waitUntil("the fixture to end", timeoutSeconds: 60) { !process.isRunning }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(said.trimmingCharacters(in: .whitespacesAndNewlines),
                       "cannot find: libdispatch started threads of its own in this process, so a forked child's queues cannot be used")
    }

    /// The same meetings in launches from the fixture's template (whose warm-up's locks cached its thread's id), as a
    /// short-lived extension's code would meet them.
    func testALaunchFromItsTemplateGoesOnWhereverItsThreadsMeet() throws {
        for meeting in Self.meetings {
            let work = TemporaryDirectory(prefix: "forked-threads")
            let template = try LaunchTemplate(executable: BuildProducts.path("fixture-forked-threads"), arguments: [meeting],
                                              environment: ["PATH": "/usr/bin:/bin"], logPath: work.file("launch.log"), sandbox: nil)
            defer { LaunchTemplate.end([template], graceMilliseconds: 5_000) }
            let deadline = monotonicMilliseconds() + 60_000
            let log = { (try? String(contentsOfFile: work.file("launch.log"), encoding: .utf8)) ?? "" }
            XCTAssertTrue(template.awaitReady(until: deadline), "\(meeting): \(log())")
            let launch = try XCTUnwrap(template.launch(environment: ["PATH": "/usr/bin:/bin"], until: deadline), meeting)
            guard let status = template.awaitEnding(of: launch.templatePID, until: deadline) else {
                kill(launch.templatePID, SIGKILL)
                XCTFail("\(meeting): the launch hung where its threads met: \(log())")
                continue
            }
            XCTAssertEqual(status, 0, "\(meeting): wait status \(status): \(log())")
            XCTAssertTrue(log().contains("finished"), "\(meeting): \(log())")
        }
    }

    /// A Swift program stripped of its symbol table, or of its local symbols only (every cache is one), cannot say
    /// where its thread ids are kept: its template refuses to serve, saying why, and the broker launches it plainly.
    func testAStrippedProgramsTemplateRefusesToServe() throws {
        for (options, reason) in [([String](), "no symbol table (stripped)"), (["--discard-all"], "its local symbols stripped")] {
            let work = TemporaryDirectory(prefix: "forked-threads-stripped")
            let stripped = work.file("fixture-forked-threads")
            let strip = Process()
            strip.executableURL = URL(fileURLWithPath: "/usr/bin/strip")
            strip.arguments = options + ["-o", stripped, BuildProducts.path("fixture-forked-threads")]
            try strip.run()
            strip.waitUntilExit()
            XCTAssertEqual(strip.terminationStatus, 0)
            let template = try LaunchTemplate(executable: stripped, arguments: ["once"], environment: ["PATH": "/usr/bin:/bin"],
                                              logPath: work.file("launch.log"), sandbox: nil)
            defer { LaunchTemplate.end([template], graceMilliseconds: 5_000) }
            XCTAssertFalse(template.awaitReady(until: monotonicMilliseconds() + 60_000), "\(options)")
            let log = (try? String(contentsOfFile: work.file("launch.log"), encoding: .utf8)) ?? ""
            XCTAssertTrue(log.contains("the launch template cannot serve: the thread ids its Swift runtime and libdispatch keep cannot be found (\(stripped): "
                                       + "is Swift with thread-local storage but \(reason))"), log)
        }
    }

    /// A libdispatch stripped of its symbol table cannot say where its thread id is kept: a process loading it is not
    /// forked, saying why.
    func testAProcessWhoseLibdispatchIsStrippedIsNotForked() throws {
        let maps = String(decoding: try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/self/maps")).readDataToEndOfFile(), as: UTF8.self)
        guard let library = maps.split(separator: "\n").compactMap({ $0.split(separator: " ").last })
            .first(where: { $0.hasSuffix("/libdispatch.so") }) else {
            throw XCTSkip("libdispatch is linked statically here: no library to strip")
        }
        let work = TemporaryDirectory(prefix: "forked-threads-dispatch")
        let strip = Process()
        strip.executableURL = URL(fileURLWithPath: "/usr/bin/strip")
        strip.arguments = ["-o", work.file("libdispatch.so"), String(library)]
        try strip.run()
        strip.waitUntilExit()
        XCTAssertEqual(strip.terminationStatus, 0)
        let said = try forkAndMeet(forgetting: true, "once", deadlineMilliseconds: 60_000,
                                   environment: ["LD_LIBRARY_PATH": work.path, "PATH": "/usr/bin:/bin"])
        XCTAssertEqual(said, "cannot find: \(work.file("libdispatch.so")): is libdispatch but has no symbol table (stripped)")
    }

    /// The fixture's `--fork`: it locks, forks, and its child meets; what it says of the child.
    private func forkAndMeet(forgetting: Bool, _ meeting: String, deadlineMilliseconds: Int, environment: [String: String]? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("fixture-forked-threads"))
        // A trap ends the child at once: no crash backtracer symbolicates it meanwhile, which on a loaded machine can
        // outlast the deadline (and keep the fixture's output open).
        process.environment = (environment ?? ProcessInfo.processInfo.environment).merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        process.arguments = ["--fork", forgetting ? "forgetting" : "plain", "\(deadlineMilliseconds)", meeting]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The fixture kills its child at the deadline; it ends soon after.
        waitUntil("the fixture to end", timeoutSeconds: Double(deadlineMilliseconds) / 1_000 + 30) { !process.isRunning }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return said.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
