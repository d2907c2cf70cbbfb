import Foundation

/// Renders one self-contained HTML page: inline CSS and SVG, no scripts, no external
/// fonts, links or images, so it works offline. It shows today's apps as a donut, the
/// week as bars, an hour-by-day heatmap, a per-app table and the insights as cards.
/// All text is escaped, and the same reports always give the same bytes.
public struct HTMLReportRenderer: Sendable {
    /// Creates a renderer.
    public init() {}

    /// The page for `daily` (today) and `weekly` (normally the week ending on that day).
    public func render(daily: DailyReport, weekly: WeeklyReport) -> String {
        let donut = DonutChart(apps: daily.apps, totalSeconds: daily.totalSeconds)
        let week = "\(weekly.firstDay.shortTitle) – \(weekly.lastDay.shortTitle) \(weekly.lastDay.year)"
        let sections = [
            "<!DOCTYPE html>",
            "<html lang=\"en\">",
            "<head>",
            "<meta charset=\"utf-8\"/>",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>",
            "<title>Screen Time · \(HTMLText.escape(daily.day.longTitle))</title>",
            "<style>\(Self.styleSheet)</style>",
            "</head>",
            "<body>",
            "<main class=\"page\">",
            "<header class=\"top\">",
            "<div><h1>Screen Time</h1>",
            "<p class=\"sub\">\(HTMLText.escape(daily.day.longTitle)) · \(HTMLText.escape(daily.timeZoneIdentifier))</p></div>",
            "<div class=\"morning\"><span class=\"label\">This morning</span><span class=\"message\">\(HTMLText.escape(daily.insights.morningMessage))</span></div>",
            "</header>",
            "<section class=\"grid charts\">",
            "<article class=\"card\"><h2>Today</h2><div class=\"donut-wrap\">",
            donut.svg(),
            donut.legend(),
            "</div></article>",
            "<article class=\"card\"><h2>This week <span class=\"h2-note\">\(HTMLText.escape(week)) · \(HTMLText.escape(DurationText.short(weekly.totalSeconds))) in all</span></h2>",
            WeekBarChart(days: weekly.days).svg(),
            "</article>",
            "</section>",
            "<section class=\"grid stats\">",
            todayStats(daily),
            "</section>",
            "<section class=\"card\"><h2>Hour by day</h2>",
            HourHeatmap(days: weekly.days, hourByDay: weekly.hourByDay).svg(),
            "</section>",
            "<section class=\"grid insights\">",
            insightCards(daily.insights),
            "</section>",
            "<section class=\"grid tables\">",
            appTable(daily: daily, weekly: weekly, donut: donut),
            webTable(daily.webDomains),
            "</section>",
            "<footer>Built on this device by the ShieldBus report builder. Private browsing is never recorded.</footer>",
            "</main>",
            "</body>",
            "</html>",
        ]
        return sections.joined(separator: "\n") + "\n"
    }

    // MARK: - Sections

    private func todayStats(_ daily: DailyReport) -> String {
        let firstPickup = daily.firstPickup.map { "first at \($0.clockTime) · \($0.app)" } ?? "no pickups today"
        let topSource = daily.notificationsBySource.first.map { "most from \($0.name)" } ?? "none today"
        let topShield = daily.shieldEncountersByTarget.first.map { "most on \($0.name)" } ?? "no shields met"
        return [
            card(label: "Pickups", value: "\(daily.pickups)", detail: firstPickup, style: "stat"),
            card(label: "Notifications", value: "\(daily.notifications)", detail: topSource, style: "stat"),
            card(label: "Shield encounters", value: "\(daily.shieldEncounters)", detail: topShield, style: "stat"),
            card(label: "Grace passes", value: "\(daily.gracePassesUsed)",
                 detail: "\(daily.nudgesUsed) \(daily.nudgesUsed == 1 ? "nudge" : "nudges") used", style: "stat"),
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
                 detail: "over \(insights.daysWithData) \(dayWord) with data", style: "insight"),
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
                     "<thead><tr><th>App</th><th>Category</th><th class=\"num\">Today</th><th class=\"num\">This week</th><th class=\"share\">Share of week</th></tr></thead>",
                     "<tbody>"]
        if ordered.isEmpty {
            lines.append("<tr><td colspan=\"5\" class=\"empty\">No app usage this week.</td></tr>")
        }
        for (app, row) in ordered {
            let width = weekly.totalSeconds > 0 ? HTMLText.number(row.week / weekly.totalSeconds * 100) : "0"
            lines.append("<tr><td><span class=\"swatch\" style=\"background:\(donut.color(of: app))\"></span>\(HTMLText.escape(app))</td><td class=\"muted\">\(HTMLText.escape(row.category))</td><td class=\"num\">\(HTMLText.escape(DurationText.short(row.today)))</td><td class=\"num\">\(HTMLText.escape(DurationText.short(row.week)))</td><td class=\"share\"><div class=\"track\"><div class=\"fill\" style=\"width:\(width)%\"></div></div><span class=\"pct\">\(HTMLText.percent(row.week, of: weekly.totalSeconds))</span></td></tr>")
        }
        lines += ["</tbody>", "</table>", "</article>"]
        return lines.joined(separator: "\n")
    }

    private func webTable(_ domains: [UsageEntry]) -> String {
        var lines = ["<article class=\"card\"><h2>Websites today</h2>", "<table class=\"web\">", "<tbody>"]
        if domains.isEmpty {
            lines.append("<tr><td class=\"empty\">No websites visited.</td></tr>")
        }
        for domain in domains {
            lines.append("<tr><td>\(HTMLText.escape(domain.name))</td><td class=\"num\">\(HTMLText.escape(DurationText.short(domain.seconds)))</td></tr>")
        }
        lines += ["</tbody>", "</table>", "</article>"]
        return lines.joined(separator: "\n")
    }

    // Only system fonts, and no '&' or '<' so the page stays well-formed XML too.
    private static let styleSheet = """

    :root { --bg: #f4f5f9; --card: #ffffff; --ink: #1d2233; --muted: #6b7185; --line: #e7e9f0; --accent: #5b5bd6; }
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
    .charts { grid-template-columns: 1fr 1fr; }
    .stats { grid-template-columns: repeat(4, 1fr); }
    .insights { grid-template-columns: repeat(3, 1fr); }
    .tables { grid-template-columns: 2fr 1fr; align-items: start; }
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
    svg.chart { display: block; height: auto; }
    svg text { font-family: inherit; }
    .axis { font-size: 11px; fill: var(--muted); }
    .day { font-size: 12px; fill: var(--ink); font-weight: 600; }
    .day.current, .bar-value.current { fill: var(--accent); }
    .bar-value { font-size: 12px; font-weight: 650; fill: var(--ink); }
    line.gridline { stroke: var(--line); stroke-width: 1; }
    line.baseline { stroke: #c9ccd8; stroke-width: 1; }
    .key { font-size: 10px; fill: #3a3f55; }
    .key.on-dark { fill: #ffffff; }
    .label { color: var(--muted); font-size: 13px; }
    .value { font-size: 24px; font-weight: 700; margin-top: 2px; overflow-wrap: anywhere; }
    .detail { color: var(--muted); font-size: 13px; margin-top: 2px; }
    .insight.wide { grid-column: 1 / -1; background: #f0f0fd; box-shadow: none; border: 1px solid #dcdcf7; }
    .insight.wide .value { font-size: 18px; font-weight: 600; }
    .trend-increasing .value { color: #d9480f; }
    .trend-decreasing .value { color: #12a594; }
    .trend-stable .value { color: var(--accent); }
    table { width: 100%; border-collapse: collapse; }
    th { text-align: left; font-size: 12px; color: var(--muted); font-weight: 600; padding: 6px 8px; border-bottom: 1px solid var(--line); }
    td { padding: 8px; border-bottom: 1px solid var(--line); }
    tr:last-child td { border-bottom: none; }
    .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
    .muted { color: var(--muted); }
    .share { width: 32%; }
    .track { display: inline-block; vertical-align: middle; width: calc(100% - 48px); height: 8px; background: #eceef4; border-radius: 4px; overflow: hidden; }
    .fill { height: 100%; background: var(--accent); border-radius: 4px; }
    .pct { display: inline-block; width: 44px; text-align: right; color: var(--muted); font-size: 13px; }
    .empty { color: var(--muted); font-style: italic; }
    footer { color: var(--muted); font-size: 12px; text-align: center; margin-top: 26px; }
    @media (max-width: 820px) { .charts, .tables, .stats, .insights { grid-template-columns: 1fr; } }

    """
}
