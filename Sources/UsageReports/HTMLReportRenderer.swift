import Foundation

/// Renders self-contained HTML pages: inline CSS and SVG, no scripts, no external fonts,
/// links or images, so they work offline; light and dark (`prefers-color-scheme`); laid out
/// for widths from a phone's 390 px to a desktop's 1440 px. The daily page shows the day and
/// its week (every card both); the range page shows a month or any run of days as a calendar
/// heatmap and daily bars. All text is escaped, and the same reports always give the same bytes.
public struct HTMLReportRenderer: Sendable {
    /// Creates a renderer.
    public init() {}

    /// The page for `daily` (today) and `weekly` (normally the week ending on that day).
    public func render(daily: DailyReport, weekly: WeeklyReport) -> String {
        let donut = DonutChart(apps: daily.apps, totalSeconds: daily.totalSeconds)
        let week = "\(weekly.firstDay.shortTitle) – \(weekly.lastDay.shortTitle) \(weekly.lastDay.year)"
        return page(title: "Screen Time · \(daily.day.longTitle)", subtitle: "\(daily.day.longTitle) · \(daily.timeZoneIdentifier)",
                    aside: "<div class=\"morning\"><span class=\"label\">This morning</span><span class=\"message\">\(HTMLText.escape(daily.insights.morningMessage))</span></div>",
                    sections: [
            "<section class=\"grid charts\">",
            "<article class=\"card\"><h2>Today</h2><div class=\"donut-wrap\">",
            donut.svg(),
            donut.legend(),
            "</div></article>",
            "<article class=\"card\"><h2>This week <span class=\"h2-note\">\(HTMLText.escape(week)) · \(HTMLText.escape(DurationText.short(weekly.totalSeconds))) in all</span></h2>",
            DayBarChart(bars: weekly.days.map { DayBarChart.Bar(day: $0.day, seconds: $0.totalSeconds) }).svg(),
            "</article>",
            "</section>",
            "<section class=\"grid stats\">",
            dayAndWeekStats(daily, weekly),
            "</section>",
            "<section class=\"card\"><h2>Hour by day</h2>",
            HourHeatmap(days: weekly.days, hourByDay: weekly.hourByDay).svg(),
            HourHeatmap(days: weekly.days, hourByDay: weekly.hourByDay, hoursPerColumn: 3).svg(),
            "</section>",
            "<section class=\"grid insights\">",
            insightCards(daily.insights),
            "</section>",
            "<section class=\"grid tables\">",
            appTable(daily: daily, weekly: weekly, donut: donut),
            webTable(today: daily.webDomains, week: weekly.webDomains),
            "</section>",
        ])
    }

    /// The page of a month or a range: totals, the calendar heatmap, daily bars and the lists.
    public func render(range: RangeReport) -> String {
        let title = range.context == .monthly
            ? range.firstDay.monthTitle
            : "\(range.firstDay.shortTitle) \(range.firstDay.year) – \(range.lastDay.shortTitle) \(range.lastDay.year)"
        let count = range.days.count
        let dayWord = count == 1 ? "day" : "days"
        let busiest = range.days.max { ($0.totalSeconds, $1.day) < ($1.totalSeconds, $0.day) }
        return page(title: "Screen Time · \(title)", subtitle: "\(title) · \(range.timeZoneIdentifier)", aside: "", sections: [
            "<section class=\"grid stats\">",
            card(label: "Screen time", value: DurationText.short(range.totalSeconds),
                 detail: "\(count) \(dayWord), \(range.daysWithData) with data", style: "stat"),
            card(label: "Daily average", value: DurationText.short(range.averageSecondsPerDay),
                 detail: "the total ÷ \(count) \(dayWord)", style: "stat"),
            card(label: "Pickups", value: "\(range.pickups)",
                 detail: busiest.map { "busiest day \($0.day.shortTitle) · \(DurationText.short($0.totalSeconds))" } ?? "", style: "stat"),
            card(label: "Notifications", value: "\(range.notifications)", detail: "", style: "stat"),
            card(label: "Shield encounters", value: "\(range.shieldEncounters)",
                 detail: range.shieldEncountersByTarget.first.map { "most on \($0.name)" } ?? "no shields met", style: "stat"),
            card(label: "Grace passes", value: "\(range.gracePassesUsed)",
                 detail: "\(range.nudgesUsed) \(range.nudgesUsed == 1 ? "nudge" : "nudges") used", style: "stat"),
            "</section>",
            "<section class=\"grid charts\">",
            "<article class=\"card\"><h2>Calendar</h2>", CalendarHeatmap(days: range.days).svg(), "</article>",
            "<article class=\"card\"><h2>Day by day</h2>",
            DayBarChart(bars: range.days.map { DayBarChart.Bar(day: $0.day, seconds: $0.totalSeconds) }).svg(),
            "</article>",
            "</section>",
            "<section class=\"grid tables\">",
            rangeAppTable(range),
            usageTable("Websites", range.webDomains, empty: "No websites visited."),
            "</section>",
            "<section class=\"grid tables\">",
            usageTable("Categories", range.categories, empty: "No app usage."),
            "</section>",
        ])
    }

    // MARK: - Sections

    private func page(title: String, subtitle: String, aside: String, sections: [String]) -> String {
        let lines = [
            "<!DOCTYPE html>",
            "<html lang=\"en\">",
            "<head>",
            "<meta charset=\"utf-8\"/>",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>",
            "<meta name=\"color-scheme\" content=\"light dark\"/>",
            "<title>\(HTMLText.escape(title))</title>",
            "<style>\(Self.styleSheet)</style>",
            "</head>",
            "<body>",
            "<main class=\"page\">",
            "<header class=\"top\">",
            "<div><h1>Screen Time</h1>",
            "<p class=\"sub\">\(HTMLText.escape(subtitle))</p></div>",
            aside,
            "</header>",
        ] + sections + [
            "<footer>Built on this device by the ShieldBus report builder. Private browsing is never recorded.</footer>",
            "</main>",
            "</body>",
            "</html>",
        ]
        return lines.filter { !$0.isEmpty }.joined(separator: "\n") + "\n"
    }

    /// Every count of the day with the week's beside it.
    private func dayAndWeekStats(_ daily: DailyReport, _ weekly: WeeklyReport) -> String {
        let firstPickup = daily.firstPickup.map { " · first at \($0.clockTime), \($0.app)" } ?? ""
        let topSource = daily.notificationsBySource.first.map { " · most from \($0.name)" } ?? ""
        let topShield = daily.shieldEncountersByTarget.first.map { " · most on \($0.name)" } ?? ""
        return [
            card(label: "Pickups", value: "\(daily.pickups)", detail: "\(weekly.pickups) this week\(firstPickup)", style: "stat"),
            card(label: "Notifications", value: "\(daily.notifications)", detail: "\(weekly.notifications) this week\(topSource)", style: "stat"),
            card(label: "Shield encounters", value: "\(daily.shieldEncounters)", detail: "\(weekly.shieldEncounters) this week\(topShield)", style: "stat"),
            card(label: "Grace passes", value: "\(daily.gracePassesUsed)",
                 detail: "\(weekly.gracePassesUsed) this week · nudges \(daily.nudgesUsed) today, \(weekly.nudgesUsed) this week", style: "stat"),
        ].joined(separator: "\n")
    }

    private func insightCards(_ insights: Insights) -> String {
        let arrow: String
        switch insights.trend {
        case .increasing: arrow = "↑ Increasing"
        case .decreasing: arrow = "↓ Decreasing"
        case .stable: arrow = "→ Stable"
        }
        let dayWord = insights.daysWithData == 1 ? "day" : "days"
        return [
            card(label: "Most used app", value: insights.mostUsedApp ?? "None",
                 detail: "\(DurationText.short(insights.mostUsedAppSeconds)) this week", style: "insight"),
            card(label: "Daily average", value: DurationText.short(insights.averageDailySeconds),
                 detail: "the week ÷ 7 · \(insights.daysWithData) \(dayWord) with data", style: "insight"),
            card(label: "Trend", value: arrow, detail: "last 3 days", style: "insight trend-\(insights.trend.rawValue)"),
            card(label: "Recommendation", value: insights.recommendation, detail: "", style: "insight wide"),
        ].joined(separator: "\n")
    }

    private func card(label: String, value: String, detail: String, style: String) -> String {
        let detailLine = detail.isEmpty ? "" : "<div class=\"detail\">\(HTMLText.escape(detail))</div>"
        return "<article class=\"card \(style)\"><div class=\"label\">\(HTMLText.escape(label))</div><div class=\"value\">\(HTMLText.escape(value))</div>\(detailLine)</article>"
    }

    /// Apps of the day and of the week in one table: today's time first, then the week's.
    private func appTable(daily: DailyReport, weekly: WeeklyReport, donut: DonutChart) -> String {
        var rows: [String: (category: String, today: TimeInterval, week: TimeInterval)] = [:]
        for app in weekly.apps { rows[app.app] = (app.category, 0, app.seconds) }
        for app in daily.apps { rows[app.app, default: (app.category, 0, 0)].today = app.seconds }
        let ordered = rows.sorted {
            ($0.value.today, $0.value.week) != ($1.value.today, $1.value.week)
                ? ($0.value.today, $0.value.week) > ($1.value.today, $1.value.week)
                : $0.key < $1.key
        }
        var lines = ["<article class=\"card\"><h2>Apps</h2>", "<table class=\"apps\">",
                     "<thead><tr><th>App</th><th class=\"cat\">Category</th><th class=\"num\">Today</th><th class=\"num\">This week</th><th class=\"share\">Share of week</th></tr></thead>",
                     "<tbody>"]
        if ordered.isEmpty {
            lines.append("<tr><td colspan=\"5\" class=\"empty\">No app usage this week.</td></tr>")
        }
        for (app, row) in ordered {
            lines.append("<tr><td><span class=\"swatch\" style=\"background:\(donut.color(of: app))\"></span>\(HTMLText.escape(app))</td><td class=\"muted cat\">\(HTMLText.escape(row.category))</td><td class=\"num\">\(HTMLText.escape(DurationText.short(row.today)))</td><td class=\"num\">\(HTMLText.escape(DurationText.short(row.week)))</td>\(shareCell(row.week, of: weekly.totalSeconds))</tr>")
        }
        lines += ["</tbody>", "</table>", "</article>"]
        return lines.joined(separator: "\n")
    }

    private func rangeAppTable(_ range: RangeReport) -> String {
        var lines = ["<article class=\"card\"><h2>Apps</h2>", "<table class=\"apps\">",
                     "<thead><tr><th>App</th><th class=\"cat\">Category</th><th class=\"num\">Time</th><th class=\"share\">Share</th></tr></thead>",
                     "<tbody>"]
        if range.apps.isEmpty {
            lines.append("<tr><td colspan=\"4\" class=\"empty\">No app usage.</td></tr>")
        }
        let palette = DonutChart(apps: range.apps, totalSeconds: range.totalSeconds)
        for app in range.apps {
            lines.append("<tr><td><span class=\"swatch\" style=\"background:\(palette.color(of: app.app))\"></span>\(HTMLText.escape(app.app))</td><td class=\"muted cat\">\(HTMLText.escape(app.category))</td><td class=\"num\">\(HTMLText.escape(DurationText.short(app.seconds)))</td>\(shareCell(app.seconds, of: range.totalSeconds))</tr>")
        }
        lines += ["</tbody>", "</table>", "</article>"]
        return lines.joined(separator: "\n")
    }

    private func shareCell(_ part: TimeInterval, of whole: TimeInterval) -> String {
        let width = whole > 0 ? HTMLText.number(part / whole * 100) : "0"
        return "<td class=\"share\"><div class=\"track\"><div class=\"fill\" style=\"width:\(width)%\"></div></div><span class=\"pct\">\(HTMLText.percent(part, of: whole))</span></td>"
    }

    /// Web time per domain for the day and for the week.
    private func webTable(today: [UsageEntry], week: [UsageEntry]) -> String {
        let todayByName = Dictionary(today.map { ($0.name, $0.seconds) }, uniquingKeysWith: +)
        let rows = week.map { (name: $0.name, today: todayByName[$0.name] ?? 0, week: $0.seconds) }
            .sorted { ($0.today, $0.week) != ($1.today, $1.week) ? ($0.today, $0.week) > ($1.today, $1.week) : $0.name < $1.name }
        return nameAndTimesTable("Websites", headers: ["Domain", "Today", "This week"],
                                 rows: rows.map { [$0.name, DurationText.short($0.today), DurationText.short($0.week)] },
                                 empty: "No websites visited this week.")
    }

    private func usageTable(_ heading: String, _ entries: [UsageEntry], empty: String) -> String {
        nameAndTimesTable(heading, headers: nil, rows: entries.map { [$0.name, DurationText.short($0.seconds)] }, empty: empty)
    }

    /// A card with a table of a name and times per row (the times right-aligned).
    private func nameAndTimesTable(_ heading: String, headers: [String]?, rows: [[String]], empty: String) -> String {
        var lines = ["<article class=\"card\"><h2>\(HTMLText.escape(heading))</h2>", "<table class=\"web\">"]
        if let headers {
            let cells = headers.enumerated().map { "<th\($0.offset > 0 ? " class=\"num\"" : "")>\(HTMLText.escape($0.element))</th>" }
            lines.append("<thead><tr>\(cells.joined())</tr></thead>")
        }
        lines.append("<tbody>")
        if rows.isEmpty {
            lines.append("<tr><td colspan=\"\(headers?.count ?? 2)\" class=\"empty\">\(HTMLText.escape(empty))</td></tr>")
        }
        for row in rows {
            let cells = row.enumerated().map { "<td\($0.offset > 0 ? " class=\"num\"" : "")>\(HTMLText.escape($0.element))</td>" }
            lines.append("<tr>\(cells.joined())</tr>")
        }
        lines += ["</tbody>", "</table>", "</article>"]
        return lines.joined(separator: "\n")
    }

    // Only system fonts, and no '&' or '<' so the page stays well-formed XML too.
    private static let styleSheet = """

    :root { color-scheme: light dark; --bg: #f4f5f9; --card: #ffffff; --ink: #1d2233; --muted: #6b7185; --line: #e7e9f0; --accent: #5b5bd6; --accent-soft: #b4b4ef; --track: #eceef4; --wide: #f0f0fd; --wide-line: #dcdcf7; --key: #3a3f55; --empty-cell: #eef0f6; }
    @media (prefers-color-scheme: dark) {
      :root { --bg: #111320; --card: #1c1f31; --ink: #eceef7; --muted: #a3a8bd; --line: #2e3247; --accent: #8f8ff0; --accent-soft: #4a4a9a; --track: #2e3247; --wide: #25264a; --wide-line: #3b3d70; --key: #d6d8e6; --empty-cell: #2a2e44; }
      .card { box-shadow: none; }
    }
    * { box-sizing: border-box; }
    body { margin: 0; background: var(--bg); color: var(--ink); font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
    .page { max-width: 1120px; margin: 0 auto; padding: 32px 24px 40px; }
    .top { display: flex; justify-content: space-between; align-items: flex-end; gap: 20px; flex-wrap: wrap; }
    h1 { font-size: 30px; margin: 0; letter-spacing: -0.01em; }
    .sub { color: var(--muted); margin: 4px 0 0; }
    .morning { background: linear-gradient(135deg, #5b5bd6, #8e4ec6); color: #fff; border-radius: 14px; padding: 12px 18px; display: flex; flex-direction: column; min-width: 260px; }
    .morning .label { color: #ffffff; font-size: 12px; text-transform: uppercase; letter-spacing: 0.08em; opacity: 0.85; }
    .morning .message { font-size: 17px; font-weight: 600; }
    .grid { display: grid; gap: 18px; margin-top: 18px; }
    .grid > * { min-width: 0; }
    .charts { grid-template-columns: 1fr 1fr; }
    .stats { grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); }
    .insights { grid-template-columns: repeat(3, 1fr); }
    .tables { grid-template-columns: 2fr 1fr; align-items: start; }
    .tables > :only-child { grid-column: 1 / -1; }
    section.card { margin-top: 18px; }
    .card { background: var(--card); border-radius: 16px; padding: 18px 20px; box-shadow: 0 1px 2px rgba(20, 24, 40, 0.06), 0 6px 18px rgba(20, 24, 40, 0.05); }
    h2 { font-size: 13px; text-transform: uppercase; letter-spacing: 0.07em; color: var(--muted); margin: 0 0 12px; font-weight: 650; }
    .h2-note { text-transform: none; letter-spacing: 0; font-weight: 400; margin-left: 6px; }
    .donut-wrap { display: flex; align-items: center; gap: 18px; flex-wrap: wrap; }
    .donut-total { font-size: 28px; font-weight: 700; fill: var(--ink); }
    .donut-caption { font-size: 12px; fill: var(--muted); text-transform: uppercase; letter-spacing: 0.08em; }
    .legend { list-style: none; margin: 0; padding: 0; flex: 1; min-width: 170px; }
    .legend li { display: flex; align-items: center; gap: 8px; padding: 6px 0; border-bottom: 1px solid var(--line); }
    .legend li:last-child { border-bottom: none; }
    .legend .name { flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    .legend .time { font-variant-numeric: tabular-nums; font-weight: 600; }
    .legend .pct { color: var(--muted); width: 40px; text-align: right; font-variant-numeric: tabular-nums; }
    .swatch { display: inline-block; width: 10px; height: 10px; border-radius: 3px; margin-right: 8px; flex: none; }
    .legend .swatch { margin-right: 0; }
    svg.chart { display: block; height: auto; max-width: 100%; }
    svg.donut circle[stroke="#eceef4"] { stroke: var(--track); }
    svg.heatmap.compact { display: none; }
    svg rect[fill="#eef0f6"] { fill: var(--empty-cell); }
    svg text { font-family: inherit; }
    .axis { font-size: 11px; fill: var(--muted); }
    .day { font-size: 12px; fill: var(--ink); font-weight: 600; }
    .day.current, .bar-value.current { fill: var(--accent); }
    rect.bar { fill: var(--accent-soft); }
    rect.bar.current { fill: var(--accent); }
    .bar-value { font-size: 12px; font-weight: 650; fill: var(--ink); }
    .cal-time { font-size: 12px; font-weight: 600; fill: var(--key); }
    line.gridline { stroke: var(--line); stroke-width: 1; }
    line.baseline { stroke: var(--muted); stroke-width: 1; }
    .key { font-size: 10px; fill: var(--key); }
    .key.on-dark, .cal-time.on-dark { fill: #ffffff; }
    .label { color: var(--muted); font-size: 13px; }
    .value { font-size: 24px; font-weight: 700; margin-top: 2px; overflow-wrap: anywhere; }
    .detail { color: var(--muted); font-size: 13px; margin-top: 2px; }
    .insight.wide { grid-column: 1 / -1; background: var(--wide); box-shadow: none; border: 1px solid var(--wide-line); }
    .insight.wide .value { font-size: 18px; font-weight: 600; }
    .trend-increasing .value { color: #e8590c; }
    .trend-decreasing .value { color: #12a594; }
    .trend-stable .value { color: var(--accent); }
    table { width: 100%; border-collapse: collapse; table-layout: auto; }
    th { text-align: left; font-size: 12px; color: var(--muted); font-weight: 600; padding: 6px 8px; border-bottom: 1px solid var(--line); }
    td { padding: 8px; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
    tr:last-child td { border-bottom: none; }
    .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
    .muted { color: var(--muted); }
    .share { width: 32%; }
    .track { display: inline-block; vertical-align: middle; width: calc(100% - 48px); height: 8px; background: var(--track); border-radius: 4px; overflow: hidden; }
    .fill { height: 100%; background: var(--accent); border-radius: 4px; }
    .pct { display: inline-block; width: 44px; text-align: right; color: var(--muted); font-size: 13px; }
    .empty { color: var(--muted); font-style: italic; }
    footer { color: var(--muted); font-size: 12px; text-align: center; margin-top: 26px; }
    @media (max-width: 820px) { .charts, .tables, .insights { grid-template-columns: 1fr; } }
    @media (max-width: 640px) {
      .page { padding: 18px 12px 28px; }
      .card { padding: 14px 14px; }
      .morning { min-width: 0; width: 100%; }
      .stats { grid-template-columns: 1fr 1fr; gap: 12px; }
      svg.heatmap { display: none; }
      svg.heatmap.compact { display: block; }
      .cat, .share { display: none; }
    }

    """
}
