// ShieldBusTestSupport: running the real `shieldbus` broker and fixture processes from tests, with deadlines, never sleeps.

import BusClient
import BusProtocol
import Foundation
import XCTest

/// Where the build put the executables (the test binary lives in the same products directory).
public enum BuildProducts {
    public static var directory: URL {
        _ = TestWatchdog.registered
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        // `swift test` runs <products>/ShieldBusPackageTests.xctest; walk up to the folder holding it.
        while url.pathComponents.count > 1 && !FileManager.default.fileExists(atPath: url.deletingLastPathComponent().appendingPathComponent("shieldbus").path) {
            url = url.deletingLastPathComponent()
        }
        return url.deletingLastPathComponent()
    }

    /// The path of a built executable product; fails the test clearly when it was not built.
    public static func path(_ name: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        let path = directory.appendingPathComponent(name).path
        if !FileManager.default.isExecutableFile(atPath: path) {
            XCTFail("the executable \(name) was not built (looked at \(path)); run `swift build --build-tests` first", file: file, line: line)
        }
        return path
    }

    /// `.build/release/<name>` when it is built and newer than each of `sources` (paths from the repository root),
    /// else why not: a test of the release build skips, saying so, rather than judge a stale build (`make bench-build`
    /// builds it; `make test` does not).
    public static func currentRelease(_ name: String, builtFrom sources: [String]) -> Result<String, ReleaseUnavailable> {
        let program = repositoryRoot.appendingPathComponent(".build/release/" + name).path
        guard FileManager.default.isExecutableFile(atPath: program) else {
            return .failure(ReleaseUnavailable(reason: "\(program) is not built (make bench-build)"))
        }
        func modified(_ path: String) -> Date? { try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date }
        for source in sources {
            let written = repositoryRoot.appendingPathComponent(source).path
            if let built = modified(program), let changed = modified(written), built < changed {
                return .failure(ReleaseUnavailable(reason: "\(program) is older than \(source): build it again (make bench-build)"))
            }
        }
        return .success(program)
    }

    /// Why `currentRelease` gives no program.
    public struct ReleaseUnavailable: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// The repository root (for Config/ files).
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}

/// Flushes the test log at every test's start and end, and ends a run in which one test hangs. XCTest's lines go to
/// a buffered standard output, so when CI stops a run that hangs, the last few kilobytes — the test that hung among
/// them — would never be written. A test that runs longer than `SHIELDBUS_TEST_CASE_LIMIT_SECONDS` (300; the
/// longest take about 30 s) ends the run with its name and the processes it left, instead of holding CI for hours.
/// Registered by the first test that starts a built program.
final class TestWatchdog: NSObject, XCTestObservation, @unchecked Sendable {
    static let registered: Void = {
        let watchdog = TestWatchdog()
        // Registered during a test, whose start the watchdog did not see: timed from here.
        watchdog.current = ("the test running at the first program start", Date())
        XCTestObservationCenter.shared.addTestObserver(watchdog)
        Thread.detachNewThread { watchdog.watch() }
    }()

    private let limit = Double(ProcessInfo.processInfo.environment["SHIELDBUS_TEST_CASE_LIMIT_SECONDS"] ?? "") ?? 300
    private let lock = NSLock()
    private var current: (name: String, started: Date)?

    func testCaseWillStart(_ testCase: XCTestCase) {
        fflush(nil)
        lock.withLock { current = (testCase.name, Date()) }
    }

    func testCaseDidFinish(_ testCase: XCTestCase) {
        lock.withLock { current = nil }
        fflush(nil)
    }

    private func watch() {
        while true {
            sleep(1)  // the watchdog's own tick: it measures, it waits for nothing
            guard let (name, started) = lock.withLock({ current }), Date().timeIntervalSince(started) > limit else { continue }
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(getpid())/task")) ?? []
            let children = tasks.flatMap { task in
                ((try? String(contentsOfFile: "/proc/\(getpid())/task/\(task)/children", encoding: .utf8)) ?? "").split(separator: " ").compactMap { Int32($0) }
            }
            let processes = children.map { pid in
                FileManager.default.contents(atPath: "/proc/\(pid)/cmdline").map { "\(pid) " + String(decoding: $0, as: UTF8.self).replacingOccurrences(of: "\0", with: " ") } ?? "\(pid)"
            }
            print("=== \(name) has run for more than \(Int(limit)) s: it hangs; the run stops here. The test process's children (killed): \(processes)")
            for pid in children { kill(pid, SIGKILL) }  // a broker's plugins end with it
            exit(2)  // flushes the log on the way out
        }
    }
}

/// Polls `condition` until it holds or the deadline passes.
@discardableResult
public func waitUntil(_ what: String, timeoutSeconds: Double = 10, file: StaticString = #filePath, line: UInt = #line, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    var poll = PollInterval()
    while Date() < deadline {
        if try poll.measuring(condition) { return true }
        poll.pause()
    }
    XCTFail("timed out after \(timeoutSeconds) s waiting for \(what)", file: file, line: line)
    return false
}

/// The pause between two looks at a condition, not a wait for a guessed duration (the deadline decides): 2 ms, or four
/// times what the last look cost when that is more (up to 50 ms). A look that reads a journal can take milliseconds in
/// the debug build: polled back to back it would keep a core busy for the whole wait, a core the other tests running
/// beside it need; a cheap look (a clock, a process's state) is still made every 2 ms.
public struct PollInterval {
    private var lastLook: TimeInterval = 0

    public init() {}

    /// Calls `look`, timing it.
    public mutating func measuring<T>(_ look: () throws -> T) rethrows -> T {
        let started = DispatchTime.now().uptimeNanoseconds
        defer { lastLook = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        return try look()
    }

    public func pause() {
        usleep(useconds_t(min(max(0.002, 4 * lastLook), 0.05) * 1e6))
    }
}

/// Starts a process with its standard output and error going to `log`.
public func startProcess(_ executable: String, _ arguments: [String], environment: [String: String], log: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = environment
    process.standardInput = FileHandle.nullDevice
    try process.run(outputTo: log, errorsTo: log)
    return process
}

/// A temporary directory removed at the end.
public final class TemporaryDirectory {
    public let path: String
    /// Leave the directory behind (for debugging).
    public var keep = false
    public init(prefix: String = "sb") {
        path = NSTemporaryDirectory() + "\(prefix)-\(getpid())-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    public func file(_ name: String) -> String { path + "/" + name }
    deinit { if !keep { try? FileManager.default.removeItem(atPath: path) } }
}

/// A `shieldbus run` child process on a private runtime directory.
public final class BrokerProcess {
    public let runtime: RuntimeDirectory
    public let process = Process()
    public let logPath: String
    public let workDirectory: TemporaryDirectory

    /// Starts a broker with the given configuration text (YAML) and extra arguments, and waits until it listens.
    /// `launcher`: a program (and its arguments) that starts `shieldbus` in its stead, e.g. `/usr/bin/env`.
    /// `program`: another build's `shieldbus` (a release one) instead of this build's.
    public init(configuration: String, arguments: [String] = [], environment: [String: String] = [:],
                runtimeDirectory: String? = nil, waitForReady: Bool = true, launcher: [String] = [], program: String? = nil,
                file: StaticString = #filePath, line: UInt = #line) throws {
        workDirectory = TemporaryDirectory(prefix: "sbb")
        runtime = RuntimeDirectory(path: runtimeDirectory ?? workDirectory.file("run"))
        let configPath = workDirectory.file("config.yml")
        try configuration.write(toFile: configPath, atomically: true, encoding: .utf8)
        logPath = workDirectory.file("broker.log")
        let command = launcher + [program ?? BuildProducts.path("shieldbus", file: file, line: line), "run", "--config", configPath, "--runtime-dir", runtime.path] + arguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { _, new in new }
        process.environment = env
        process.currentDirectoryURL = BuildProducts.repositoryRoot
        try process.run(outputTo: logPath, errorsTo: logPath)
        if waitForReady {
            // Ready means it answers a status request (a socket file may be a stale one).
            waitUntil("the broker to answer (log: \(logPath))", file: file, line: line) {
                guard process.isRunning else { return true }
                guard FileManager.default.fileExists(atPath: runtime.endpointFilePath) else { return false }
                return (try? status(timeoutMilliseconds: 200)) != nil
            }
            XCTAssertTrue(process.isRunning, "the broker exited at start: \(self.log(tail: 20))", file: file, line: line)
        }
    }

    /// The broker's log so far (last lines).
    public func log(tail: Int = 40) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(tail).joined(separator: "\n")
    }

    /// A connected client.
    public func connect(name: String, role: Role = .tool, subscriptions: [String] = [""], watch: StateWatch? = nil) throws -> BusConnection {
        let connection = try BusConnection(endpoint: runtime.brokerEndpoint(), hello: Hello(name: name, role: role, subscriptions: subscriptions, watch: watch),
                                           runtime: runtime)
        try connection.connect(timeoutMilliseconds: 5000)
        return connection
    }

    /// The status report.
    public func status(timeoutMilliseconds: Int = 3000) throws -> JSONValue {
        let connection = try BusConnection(endpoint: runtime.brokerEndpoint(), hello: Hello(name: "status-\(UUID().uuidString.prefix(6).lowercased())", role: .tool, subscriptions: []), runtime: runtime)
        defer { connection.close() }
        return try connection.status(timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Sends SIGTERM and waits for the exit; returns the exit status.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeoutSeconds: Double = 15) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, signal)
        waitUntil("the broker to exit", timeoutSeconds: timeoutSeconds) { !process.isRunning }
        if process.isRunning { process.interrupt(); kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        assertNoPluginOutlivesItsBroker(runtimeDirectory: runtime.path)
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// Collects events from a connection until a condition holds or a deadline passes.
public func collectEvents(from connection: BusConnection, timeoutSeconds: Double = 10, until done: ([Envelope]) -> Bool) throws -> [Envelope] {
    var events: [Envelope] = []
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    while !done(events) && Date() < deadline {
        if case .event(let envelope, _)? = try connection.receive(timeoutMilliseconds: 100) {
            events.append(envelope)
        }
    }
    return events
}

/// Whether a process with this pid exists.
public func processExists(_ pid: Int32) -> Bool {
    kill(pid, 0) == 0 || errno == EPERM
}

/// The processes a broker started on this runtime directory that are still there (pid and command line), from
/// their environment: the broker's `SHIELDBUS_RUNTIME_DIR` and `SHIELDBUS_BROKER_PID` (a plugin started by hand has
/// no broker pid).
public func pluginProcesses(ofRuntimeDirectory path: String) -> [(pid: Int32, command: String)] {
    let entry = "SHIELDBUS_RUNTIME_DIR=\(path)"
    let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
    return pids.compactMap { pid in
        // A process that ended between the listing and the read, or a zombie, has no environment to read.
        guard let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ")?.split(separator: 0).map({ String(decoding: $0, as: UTF8.self) }),
              environment.contains(entry), environment.contains(where: { $0.hasPrefix("SHIELDBUS_BROKER_PID=") }) else { return nil }
        let command = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline").map { String(decoding: $0, as: UTF8.self).replacingOccurrences(of: "\0", with: " ") } ?? "?"
        return (pid, command)
    }
}

/// Fails when a plugin outlives its broker (it must end with it — on a stop, and by its death signal when the
/// broker is killed), and kills what is left so that it cannot disturb later tests.
public func assertNoPluginOutlivesItsBroker(runtimeDirectory path: String, timeoutSeconds: Double = 10, file: StaticString = #filePath, line: UInt = #line) {
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    var poll = PollInterval()
    var left = poll.measuring { pluginProcesses(ofRuntimeDirectory: path) }
    while !left.isEmpty && Date() < deadline {
        poll.pause()
        left = poll.measuring { pluginProcesses(ofRuntimeDirectory: path) }
    }
    guard !left.isEmpty else { return }
    XCTFail("plugins outlived their broker: \(left.map { "\($0.pid) \($0.command)" })", file: file, line: line)
    for process in left { kill(process.pid, SIGKILL) }
}

/// Runs a program to its end: its exit status, and its standard output with standard error appended.
public func runToEnd(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
