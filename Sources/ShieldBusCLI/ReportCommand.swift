import ArgumentParser
import Foundation
import UsageReports

extension ReportContext: ExpressibleByArgument {}

extension ShieldBus {
    /// `shieldbus report daily|weekly`: asks the running device's report builder and renders what it answers.
    struct Report: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the daily or weekly usage report of the running device (from its report builder).",
            discussion: """
            The report builder (a plugin with role report) answers with the numbers so far, the use in progress \
            included. Without --json or --html a table is printed.

            Examples:
              shieldbus report daily
              shieldbus report weekly --date 2026-11-29 --json
              shieldbus report daily --html report.html    # one self-contained page with SVG charts (daily and weekly)
            """
        )

        @OptionGroup var bus: BusOptions

        @Argument(help: "daily or weekly.")
        var kind: ReportContext

        @Option(name: .long, help: ArgumentHelp("The local day (YYYY-MM-DD): a daily report's day, a weekly report's last day. Default: today on the bus clock.", valueName: "day"))
        var date: String?

        @Flag(name: .long, help: "Print the report as JSON.")
        var json = false

        @Option(name: .long, help: ArgumentHelp("Write the HTML page (the day's and the week's reports, with charts) to this file.", valueName: "file"))
        var html: String?

        func validate() throws {
            if let date, LocalDay(date) == nil { throw ValidationError("--date is a day like 2026-11-25, got '\(date)'") }
        }

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            let builder = ReportRequester(runtimeDir: bus.runtimeDir, date: date)
            if let html {
                let page = HTMLReportRenderer().render(daily: try builder.daily(), weekly: try builder.weekly())
                try page.write(toFile: html, atomically: true, encoding: .utf8)
                if !json { print("wrote \(html)") }
            }
            if json {
                print(kind == .daily ? try JSONReportRenderer().render(try builder.daily()) : try JSONReportRenderer().render(try builder.weekly()))
            } else if html == nil {
                print(kind == .daily ? TerminalReportRenderer().render(try builder.daily()) : TerminalReportRenderer().render(try builder.weekly()),
                      terminator: "")
            }
        }
    }
}
