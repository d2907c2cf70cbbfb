import Foundation
import ShieldBusTestSupport
import XCTest

/// One finished run of a command (by default the built `shieldbus`), with its exit status and output.
struct CommandRun {
    let status: Int32
    let output: String
    let errors: String

    /// Runs `shieldbus` with `arguments` to its end (at most `timeoutSeconds`).
    static func shieldbus(_ arguments: [String], directory: String? = nil, timeoutSeconds: Double = 30,
                          file: StaticString = #filePath, line: UInt = #line) throws -> CommandRun {
        try run(BuildProducts.path("shieldbus", file: file, line: line), arguments, directory: directory,
                timeoutSeconds: timeoutSeconds, file: file, line: line)
    }

    /// Runs `executable` with `arguments` to its end (at most `timeoutSeconds`, then it is killed).
    static func run(_ executable: String, _ arguments: [String], directory: String? = nil, environment: [String: String] = [:],
                    timeoutSeconds: Double = 30, file: StaticString = #filePath, line: UInt = #line) throws -> CommandRun {
        let process = try StartedCommand(executable, arguments, directory: directory, environment: environment)
        return process.finish(timeoutSeconds: timeoutSeconds, file: file, line: line)
    }
}

/// A command running in the background, its output going to files that can be read while it runs.
final class StartedCommand {
    let process = Process()
    private let work = TemporaryDirectory(prefix: "sbcmd")

    init(_ executable: String, _ arguments: [String], directory: String? = nil, environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        try process.run(outputTo: work.file("stdout"), errorsTo: work.file("stderr"))
    }

    /// Standard output so far.
    var output: String { (try? String(contentsOfFile: work.file("stdout"), encoding: .utf8)) ?? "" }
    /// Standard error so far.
    var errors: String { (try? String(contentsOfFile: work.file("stderr"), encoding: .utf8)) ?? "" }

    /// Waits for the end (killing the process after `timeoutSeconds`).
    func finish(timeoutSeconds: Double = 30, file: StaticString = #filePath, line: UInt = #line) -> CommandRun {
        waitUntil("\(process.executableURL?.lastPathComponent ?? "the command") \(process.arguments ?? []) to end",
                  timeoutSeconds: timeoutSeconds, file: file, line: line) { !process.isRunning }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        return CommandRun(status: process.terminationStatus, output: output, errors: errors)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
