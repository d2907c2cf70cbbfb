import Foundation

/// Renders reports as fixed-width text for a terminal: aligned columns, "1h 05m"
/// durations and a small bar per row.
public struct TerminalReportRenderer: Sendable {
    /// Width of the name column; longer names are cut with "…".
    public let nameWidth: Int
    /// Width of the longest bar.
    public let barWidth: Int

    /// Creates a renderer.
    public init(nameWidth: Int = 22, barWidth: Int = 20) {
        precondition(nameWidth >= 4 && barWidth >= 1, "nameWidth needs at least 4 columns and barWidth 1")
        self.nameWidth = nameWidth
        self.barWidth = barWidth
    }

    private let categoryWidth = 16
    private let timeWidth = 8

    /// The daily report as text.
    public func render(_ report: DailyReport) -> String {
        var lines = title("Daily report · \(report.day.longTitle) · \(report.timeZoneIdentifier)")
        lines += [
            pair("Screen time", DurationText.short(report.totalSeconds), "Pickups", "\(report.pickups)"),
            pair("Notifications", "\(report.notifications)", "Shield encounters", "\(report.shieldEncounters)"),
            pair("Grace passes", "\(report.gracePassesUsed)", "Nudges", "\(report.nudgesUsed)"),
        ]
        if let first = report.firstPickup {
            lines.append(pair("First pickup", "\(first.clockTime) \(first.app)"))
        }
        lines += appTable(report.apps)
        lines += usageTable("Categories", report.categories)
        lines += usageTable("Websites", report.webDomains)
        lines += ["", trimmedRight("Hours".padding(toLength: nameWidth + 2, withPad: " ", startingAt: 0) + HourGlyph.axis),
                  String(repeating: " ", count: nameWidth + 2) + HourGlyph.line(report.hourlySeconds)]
        lines += insights(report.insights)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The weekly report as text.
    public func render(_ report: WeeklyReport) -> String {
        var lines = title("Weekly report · \(report.firstDay.shortTitle) – \(report.lastDay.shortTitle) \(report.lastDay.year)"
                          + " · \(report.timeZoneIdentifier)")
        let longestDay = report.days.map(\.totalSeconds).max() ?? 0
        lines += ["", header("Day", "", "Time")]
        for day in report.days {
            lines.append(row(dayLabel(day.day), "", DurationText.short(day.totalSeconds),
                             bar(day.totalSeconds, of: longestDay)))
        }
        lines.append(row("Week total", "", DurationText.short(report.totalSeconds), ""))
        lines.append(pair("Pickups", "\(report.pickups)", "Grace passes", "\(report.gracePassesUsed)"))
        lines.append(pair("Notifications", "\(report.notifications)", "Shield encounters", "\(report.shieldEncounters)"))
        lines += appTable(report.apps)
        lines += usageTable("Categories", report.categories)
        lines += usageTable("Websites", report.webDomains)
        lines += ["", trimmedRight("Hour by day".padding(toLength: nameWidth + 2, withPad: " ", startingAt: 0) + HourGlyph.axis)]
        for (day, hourly) in zip(report.days, report.hourByDay) {
            lines.append(fit(dayLabel(day.day), nameWidth) + "  " + HourGlyph.line(hourly))
        }
        lines += insights(report.insights)
        return lines.joined(separator: "\n") + "\n"
    }

    /// A monthly or range report as text: the totals, a line per day, the lists.
    public func render(_ report: RangeReport) -> String {
        let heading = report.context == .monthly
            ? "Monthly report · \(report.firstDay.monthTitle)"
            : "Range report · \(report.firstDay.shortTitle) \(report.firstDay.year) – \(report.lastDay.shortTitle) \(report.lastDay.year)"
        var lines = title(heading + " · \(report.timeZoneIdentifier)")
        let count = report.days.count
        lines += [
            pair("Screen time", DurationText.short(report.totalSeconds), "Daily average",
                 "\(DurationText.short(report.averageSecondsPerDay)) (÷ \(count) \(count == 1 ? "day" : "days"))"),
            pair("Pickups", "\(report.pickups)", "Days with data", "\(report.daysWithData)"),
            pair("Notifications", "\(report.notifications)", "Shield encounters", "\(report.shieldEncounters)"),
            pair("Grace passes", "\(report.gracePassesUsed)", "Nudges", "\(report.nudgesUsed)"),
        ]
        let longestDay = report.days.map(\.totalSeconds).max() ?? 0
        lines += ["", header("Day", "Pickups", "Time")]
        for day in report.days {
            lines.append(row(dayLabel(day.day), "\(day.pickups)", DurationText.short(day.totalSeconds), bar(day.totalSeconds, of: longestDay)))
        }
        lines += appTable(report.apps)
        lines += usageTable("Categories", report.categories)
        lines += usageTable("Websites", report.webDomains)
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Sections

    private func title(_ text: String) -> [String] {
        [text, String(repeating: "─", count: max(text.count, tableWidth))]
    }

    private func appTable(_ apps: [AppUsageEntry]) -> [String] {
        let longest = apps.first?.seconds ?? 0
        return ["", header("App", "Category", "Time")]
            + (apps.isEmpty ? [fit("(no app usage)", nameWidth)] : apps.map {
                row($0.app, $0.category, DurationText.short($0.seconds), bar($0.seconds, of: longest))
            })
    }

    private func usageTable(_ heading: String, _ entries: [UsageEntry]) -> [String] {
        guard !entries.isEmpty else { return [] }
        let longest = entries[0].seconds
        return ["", header(heading, "", "Time")]
            + entries.map { row($0.name, "", DurationText.short($0.seconds), bar($0.seconds, of: longest)) }
    }

    private func insights(_ insights: Insights) -> [String] {
        var lines = ["", "Insights"]
        if let app = insights.mostUsedApp {
            lines.append(pair("Most used app", "\(app) (\(DurationText.short(insights.mostUsedAppSeconds)))"))
        }
        lines += [
            pair("Daily average", "\(DurationText.short(insights.averageDailySeconds)) (the week ÷ 7; \(insights.daysWithData) "
                 + (insights.daysWithData == 1 ? "day" : "days") + " with data)"),
            pair("Trend", "\(insights.trend.rawValue) (last 3 days)"),
            pair("This morning", insights.morningMessage),
            pair("Tip", insights.recommendation),
        ]
        return lines
    }

    // MARK: - Cells

    private var tableWidth: Int { nameWidth + 2 + categoryWidth + 2 + timeWidth + 2 + barWidth }

    private func header(_ name: String, _ category: String, _ time: String) -> String {
        row(name, category, time, "")
    }

    private func row(_ name: String, _ category: String, _ time: String, _ bar: String) -> String {
        let cells = [fit(name, nameWidth), fit(category, categoryWidth), fit(time, timeWidth, alignRight: true), bar]
        return trimmedRight(cells.joined(separator: "  "))
    }

    private func pair(_ label: String, _ value: String, _ label2: String = "", _ value2: String = "") -> String {
        let half = fit(label, 16) + "  " + value
        guard !label2.isEmpty else { return half }
        return fit(half, 32) + fit(label2, 19) + "  " + value2
    }

    private func bar(_ value: TimeInterval, of longest: TimeInterval) -> String {
        guard value > 0, longest > 0 else { return "" }
        let cells = max(1, Int((value / longest * Double(barWidth)).rounded()))
        return String(repeating: "█", count: cells)
    }

    private func dayLabel(_ day: LocalDay) -> String {
        "\(day.shortWeekdayName) \(day.day < 10 ? " " : "")\(day.shortTitle)"
    }

    /// Pads or cuts `text` to exactly `width` characters.
    private func fit(_ text: String, _ width: Int, alignRight: Bool = false) -> String {
        let cut = text.count > width ? String(text.prefix(width - 1)) + "…" : text
        let padding = String(repeating: " ", count: width - cut.count)
        return alignRight ? padding + cut : cut + padding
    }

    private func trimmedRight(_ text: String) -> String {
        var text = text
        while text.last == " " { text.removeLast() }
        return text
    }
}
