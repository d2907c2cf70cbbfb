import ArgumentParser
import BusClient
import BusProtocol
import BusTools
import Foundation

extension ShieldBus {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show the running broker: plugins, subscriptions, events routed, errors counted."
        )

        @OptionGroup var bus: BusOptions

        @Flag(name: .long, help: "Print the report as JSON.")
        var json = false

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            let runtime = RuntimeDirectory.resolve(bus.runtimeDir)
            try runtime.checkBroker()
            let connection = try BusConnection(endpoint: runtime.brokerEndpoint(),
                                               hello: Hello(name: BusTool.name("status"), role: .tool, subscriptions: []), runtime: runtime)
            defer { connection.close() }
            let report = try connection.status()
            // Names, subscriptions and errors come from clients: escaped, so they cannot act on the terminal.
            if json {
                print(TerminalText.escapedJSON(report.jsonText))
                return
            }
            print(StatusRenderer.render(report).split(separator: "\n", omittingEmptySubsequences: false).map { TerminalText.escaped(String($0)) }.joined(separator: "\n"))
        }
    }
}

/// The status report as a person reads it.
enum StatusRenderer {
    static func render(_ report: JSONValue) -> String {
        var lines: [String] = []
        let broker = report["broker"]
        let counters = report["counters"]
        func int(_ value: JSONValue?) -> Int64 { value?.intValue ?? 0 }
        lines.append("broker pid \(int(broker?["pid"]))  clock \(broker?["clock"]?.stringValue ?? "?")  seq \(int(broker?["seq"]))  up \(duration(int(broker?["uptimeMs"])))")
        lines.append("  endpoint \(broker?["endpoint"]?.stringValue ?? "?")")
        lines.append("events \(int(counters?["events"]))  deliveries \(int(counters?["deliveries"]))  dropped \(int(counters?["dropped"]))  errors \(int(counters?["errors"]))")
        if let byCode = counters?["errorsByCode"]?.objectValue, !byCode.isEmpty {
            lines.append("  errors by kind: " + byCode.keys.sorted().map { "\($0) \(byCode[$0]!.intValue ?? 0)" }.joined(separator: ", "))
        }
        let plugins = report["plugins"]?.arrayValue ?? []
        lines.append("")
        lines.append("PLUGIN".padding(toLength: 18, withPad: " ", startingAt: 0) + "ROLE      STATE       PID     UP        RESTARTS  DELIVERED  LAG   DROPPED  ERRORS  SUBSCRIPTIONS")
        for plugin in plugins {
            let state = plugin["connected"]?.boolValue == true ? (plugin["state"]?.stringValue ?? "connected") : (plugin["state"]?.stringValue ?? "gone")
            let columns: [(String, Int)] = [
                (plugin["name"]?.stringValue ?? "?", 18), (plugin["role"]?.stringValue ?? "?", 10), (state, 12),
                (plugin["pid"].map { "\($0.intValue ?? 0)" } ?? "-", 8), ((plugin["uptimeMs"] ?? plugin["processUptimeMs"]).map { duration($0.intValue ?? 0) } ?? "-", 10),
                ("\(int(plugin["restarts"]))", 10), ("\(int(plugin["delivered"]))", 11), ("\(int(plugin["lag"]))", 6),
                ("\(int(plugin["dropped"]))", 9), ("\(int(plugin["errors"]))", 8),
            ]
            var line = columns.map { $0.0.padding(toLength: max($0.1, $0.0.count + 1), withPad: " ", startingAt: 0) }.joined()
            line += (plugin["subscriptions"]?.arrayValue ?? []).compactMap(\.stringValue).map { $0.isEmpty ? "*" : $0 }.joined(separator: " ")
            lines.append(line)
            if let error = plugin["lastError"]?.stringValue { lines.append("    last error: \(error)") }
            if let exit = plugin["lastExit"]?.stringValue { lines.append("    last exit: \(exit)") }
        }
        if plugins.isEmpty { lines.append("(no plugins connected)") }
        return lines.joined(separator: "\n")
    }

    static func duration(_ milliseconds: Int64) -> String {
        let seconds = milliseconds / 1000
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m\(seconds % 60)s" }
        return "\(seconds / 3600)h\((seconds % 3600) / 60)m"
    }
}
