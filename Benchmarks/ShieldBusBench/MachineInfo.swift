import Foundation
import ZeroMQ

/// The machine and software the figures came from, read from /proc and the tools themselves.
struct MachineInfo {
    let cpuModel: String
    let cores: Int
    let memoryGiB: Double
    let kernel: String
    let libzmq: String
    let swift: String
    let date: String

    static func current() -> MachineInfo {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let meminfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let kilobytes = meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Double($0) } ?? 0
        var names = utsname()
        uname(&names)
        let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let formatter = ISO8601DateFormatter()
        return MachineInfo(cpuModel: model, cores: ProcessInfo.processInfo.activeProcessorCount,
                           memoryGiB: kilobytes / 1_048_576, kernel: "Linux \(release)", libzmq: libzmqVersion,
                           swift: swiftVersion(), date: formatter.string(from: Date()))
    }

    /// The first line of `swift --version` from the toolchain on PATH (the one `make bench` builds with), or
    /// what the compiler that built this binary is known to be at least.
    private static func swiftVersion() -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [ProcessInfo.processInfo.environment["SWIFT"] ?? "swift", "--version"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        if (try? process.run()) != nil {
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            if let line = output.split(separator: "\n").first(where: { $0.contains("Swift version") }) {
                return line.trimmingCharacters(in: .whitespaces)
            }
        }
        #if compiler(>=6.3)
        return "Swift 6.3 or later (swift --version unavailable)"
        #else
        return "unknown"
        #endif
    }
}
