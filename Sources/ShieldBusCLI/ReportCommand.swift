import ArgumentParser
import Foundation
import UsageReports

extension ReportContext: ExpressibleByArgument {}

extension ShieldBus {
    /// `shieldbus report daily|weekly|monthly|range`: the report builder's numbers, from its store or a running broker.
    struct Report: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "report",
            abstract: "Print a daily, weekly, monthly or range usage report (from the report builder's store, or a running broker).",
            discussion: """
            Without --runtime-dir the report builder's days are read from its App-Group store directly (read-only, \
            safe while a broker runs; default store: <runtime dir>/state/appgroups), so no broker is needed; the use \
            in progress is then not included. With --runtime-dir the running broker's report builder is asked and \
            counts the use in progress. Standard error says which was done. Without --json or --html a table is printed.

            Examples:
              shieldbus report daily
              shieldbus report weekly --date 2026-11-29 --json
              shieldbus report monthly --month 2026-11 --html month.html   # a calendar heatmap and daily bars
              shieldbus report range --from 2026-11-01 --to 2026-11-15
              shieldbus report daily --html report.html --runtime-dir /tmp/sb   # the day and its week, asked of a broker
            """
        )

        @OptionGroup var bus: BusOptions

        @Argument(help: "daily, weekly, monthly or range.")
        var kind: ReportContext

        @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("The local day (YYYY-MM-DD, today, yesterday or -3d): a daily report's day, a weekly report's last day. Default: the device's today — a running broker's, or the last day the store holds.", valueName: "day"))
        var date: String?

        @Option(name: .long, help: ArgumentHelp("A monthly report's month (YYYY-MM). Default: this month.", valueName: "month"))
        var month: String?

        @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("A range report's first day (YYYY-MM-DD, today, yesterday or -3d).", valueName: "day"))
        var from: String?

        @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("A range report's last day, included (YYYY-MM-DD, today, yesterday or -3d).", valueName: "day"))
        var to: String?

        @Flag(name: .long, help: "Print the report as JSON.")
        var json = false

        @Option(name: .long, help: ArgumentHelp("Write the HTML page (with charts) to this file: the day and its week (daily), the week's days (weekly), the month or range.", valueName: "file"))
        var html: String?

        @Option(name: .long, help: ArgumentHelp("The device's state folder to read the store from (default: the one the runtime directory's last broker used, else <runtime dir>/state).", valueName: "dir"))
        var stateDir: String?

        @Option(name: .long, help: ArgumentHelp("The app group holding the report builder's days (default: the only one that holds any).", valueName: "name"))
        var group: String?

        func validate() throws {
            for (flag, value) in [("--date", date), ("--from", from), ("--to", to)] {
                if let value, WrittenDay(value) == nil { throw ValidationError("\(flag) is a day like 2026-11-25, today, yesterday or -3d, got '\(value)'") }
            }
            if let month, LocalMonth(month) == nil { throw ValidationError("--month is a month like 2026-11, got '\(month)'") }
            if kind == .range, from == nil || to == nil { throw ValidationError("a range report needs --from and --to") }
            if kind != .range, from != nil || to != nil { throw ValidationError("--from and --to are for `report range`") }
            if kind != .monthly, month != nil { throw ValidationError("--month is for `report monthly`") }
            if kind == .monthly || kind == .range, date != nil { throw ValidationError("--date is for `report daily` and `report weekly`") }
            if bus.runtimeDir != nil, stateDir != nil || group != nil {
                throw ValidationError("--runtime-dir asks a running broker; --state-dir and --group read a store instead: choose one")
            }
        }

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            let source: ReportSource = bus.runtimeDir != nil
                ? ReportRequester(runtimeDir: bus.runtimeDir)
                : try StoredReports(stores: AppGroupStores(stateDirectory: stateDir, runtimeDirectory: nil), group: group)
            printError(source.origin)
            // Relative days count back from the device's today (the report builder's), not this machine's.
            var today: LocalDay?
            func resolve(_ text: String?) throws -> LocalDay? {
                switch text.flatMap(WrittenDay.init) {
                case nil: return nil
                case .day(let day)?: return day
                case .daysBeforeToday(let days)?:
                    if today == nil { today = try source.daily(nil).day }
                    return today!.adding(days: -days)
                }
            }
            let day = try resolve(date)
            switch kind {
            case .daily, .weekly:
                if let html {
                    let weekly = try source.weekly(day)
                    // The daily page shows the day and its week; the weekly page the week's seven days as a run of days.
                    try write(kind == .daily ? HTMLReportRenderer().render(daily: try source.daily(day), weekly: weekly)
                                             : HTMLReportRenderer().render(range: try source.range(from: weekly.firstDay, to: weekly.lastDay)), to: html)
                }
                if kind == .daily {
                    try show(try source.daily(day), text: TerminalReportRenderer().render)
                } else {
                    try show(try source.weekly(day), text: TerminalReportRenderer().render)
                }
            case .monthly, .range:
                let report: RangeReport
                if kind == .monthly {
                    report = try source.monthly(month.flatMap(LocalMonth.init))
                } else {
                    guard let first = try resolve(from), let last = try resolve(to) else {
                        throw ValidationError("a range report needs --from and --to")
                    }
                    report = try source.range(from: first, to: last)
                }
                if let html { try write(HTMLReportRenderer().render(range: report), to: html) }
                try show(report, text: TerminalReportRenderer().render)
            }
        }

        /// Prints the report as JSON, or as a table unless only a page was asked for.
        private func show<Report: Encodable>(_ report: Report, text: (Report) -> String) throws {
            if json {
                print(try JSONReportRenderer().render(report))
            } else if html == nil {
                print(text(report), terminator: "")
            }
        }

        private func write(_ page: String, to path: String) throws {
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                throw CommandFailure("cannot write the page to \(path): the folder \(folder) does not exist")
            }
            do {
                try page.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
                throw CommandFailure("cannot write the page to \(path): \(underlying?.localizedDescription ?? error.localizedDescription)")
            }
            if !json { print("wrote \(path)") }
        }
    }
}

/// A day as written on the command line: `2026-11-25`, or counted back from the device's today (`today`, `yesterday`,
/// `-3d`).
enum WrittenDay: Equatable {
    case day(LocalDay)
    case daysBeforeToday(Int)

    init?(_ text: String) {
        switch text {
        case "today": self = .daysBeforeToday(0)
        case "yesterday": self = .daysBeforeToday(1)
        case _ where text.hasPrefix("-") && text.hasSuffix("d"):
            guard let days = Int(text.dropFirst().dropLast()), days >= 0 else { return nil }
            self = .daysBeforeToday(days)
        default:
            guard let day = LocalDay(text) else { return nil }
            self = .day(day)
        }
    }
}
