// Multi-process tests: several appgroup-stress processes write one app group; one is killed mid-transaction.
import AppGroupStore
import Foundation
import SQLite
import XCTest

final class MultiProcessTests: ContainerTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try container.declareSlices(group: group, ["stress": ["counter", "a", "b"]])
    }

    func testConcurrentProcessTransactionsLoseNoIncrement() throws {
        let processes = 4, increments = 200
        let children = try (0..<processes).map { _ in
            try StressProcess(["increment", root.path, group, "stress", "counter", "\(increments)"])
        }
        for child in children {
            let status = child.waitForExit()
            XCTAssertEqual(status, 0, "appgroup-stress failed: \(child.standardError())")
        }
        let defaults = try adminDefaults()
        XCTAssertEqual(try defaults.integer(forKey: "counter"), processes * increments)
        XCTAssertEqual(try defaults.entry(forKey: "counter")?.version, Int64(processes * increments))
        let log = try defaults.changes(after: 0, limit: 10_000).filter { $0.key == "counter" }
        XCTAssertEqual(log.count, processes * increments)
        XCTAssertEqual(log.map(\.version), (1...Int64(processes * increments)).map { $0 }, "versions follow commit order")
    }

    func testProcessKilledMidTransactionLeavesOldValues() throws {
        let defaults = try adminDefaults()
        try defaults.set("old-a", forKey: "a")
        try defaults.set("old-b", forKey: "b")
        let lastChange = try defaults.lastChangeNumber()

        let child = try StressProcess(["hold", root.path, group, "stress", "a=new-a", "b=new-b"])
        XCTAssertEqual(try child.readLine(deadline: .now() + 30), "IN-TX", child.standardError())
        // While the child holds its uncommitted transaction, readers see the old values.
        XCTAssertEqual(try defaults.string(forKey: "a"), "old-a")
        child.kill()
        XCTAssertEqual(child.waitForExit(), SIGKILL)
        XCTAssertEqual(child.terminationReason, .uncaughtSignal)

        let reopened = try adminDefaults()
        XCTAssertEqual(try reopened.string(forKey: "a"), "old-a")
        XCTAssertEqual(try reopened.string(forKey: "b"), "old-b")
        XCTAssertEqual(try reopened.lastChangeNumber(), lastChange, "the killed transaction logged nothing")
        XCTAssertEqual(try SQLiteConnection(path: container.storeURL(forGroup: group).path).quickCheck(), [])
        XCTAssertEqual(try reopened.set("after-a", forKey: "a").version, 2)
        XCTAssertEqual(try reopened.string(forKey: "a"), "after-a")
    }
}

/// A running `appgroup-stress` fixture with its standard streams on pipes.
final class StressProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private var pending = Data()

    init(_ arguments: [String]) throws {
        process.executableURL = try Self.executable()
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Reads one line from the child's standard output, failing after `deadline`.
    func readLine(deadline: DispatchTime) throws -> String {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                defer { pending.removeSubrange(...newline) }
                return String(decoding: pending[..<newline], as: UTF8.self)
            }
            let chunk = try read(deadline: deadline)
            guard !chunk.isEmpty else { throw FixtureError.closedOutput }
            pending.append(chunk)
        }
    }

    /// Blocks reading on a helper thread so that the wait can end at the deadline.
    private func read(deadline: DispatchTime) throws -> Data {
        let done = DispatchSemaphore(value: 0)
        let box = DataBox()
        let handle = output.fileHandleForReading
        Thread.detachNewThread {
            box.data = handle.availableData
            done.signal()
        }
        guard done.wait(timeout: deadline) == .success else { throw FixtureError.timedOut }
        return box.data
    }

    /// Sends SIGKILL: the child gets no chance to clean up.
    func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
    }

    /// Waits for the child; returns its exit status, or the signal that ended it.
    func waitForExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Whether the child exited or was ended by a signal (after `waitForExit`).
    var terminationReason: Process.TerminationReason { process.terminationReason }

    /// What the child wrote to standard error (call after it exited).
    func standardError() -> String {
        String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// Finds the fixture beside the test bundle in the build products directory.
    static func executable() throws -> URL {
        let name = "appgroup-stress"
        var folders: [URL] = []
        if let executable = Bundle.main.executableURL {
            folders.append(executable.deletingLastPathComponent())
        }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            // macOS: the .xctest bundle sits in the products folder.
            folders.append(bundle.bundleURL.deletingLastPathComponent())
        }
        // Fallback: the package's default products folder, found by walking up from this file.
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/" {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
                folders.append(folder.appendingPathComponent(".build/debug"))
                break
            }
            folder.deleteLastPathComponent()
        }
        let candidates = folders.map { $0.appendingPathComponent(name) }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw FixtureError.missing(candidates.map(\.path))
        }
        return found
    }

    private final class DataBox: @unchecked Sendable {
        var data = Data()
    }
}

/// Why the stress fixture could not be used.
enum FixtureError: Error, CustomStringConvertible {
    case missing([String])
    case closedOutput
    case timedOut

    var description: String {
        switch self {
        case .missing(let paths):
            return "the appgroup-stress fixture was not found (looked at \(paths.joined(separator: ", "))); "
                + "build it with `swift build --product appgroup-stress`"
        case .closedOutput:
            return "appgroup-stress closed its output before printing the expected line"
        case .timedOut:
            return "appgroup-stress printed nothing before the deadline"
        }
    }
}
