import Foundation
import XCTest
@testable import UsageReports
#if canImport(FoundationXML)
import FoundationXML
#endif

final class RendererTests: XCTestCase {
    private func fixedReports(_ records: [UsageRecord] = FixedWeek.records) throws -> (DailyReport, WeeklyReport) {
        let ledger = try FixedWeek.ledger(records)
        return (ledger.dailyReport(for: FixedWeek.sunday), ledger.weeklyReport(endingOn: FixedWeek.sunday))
    }

    func testDurationText() {
        XCTAssertEqual(DurationText.short(3900), "1h 05m")
        XCTAssertEqual(DurationText.short(2700), "45m")
        XCTAssertEqual(DurationText.short(36000), "10h 00m")
        XCTAssertEqual(DurationText.short(119), "1m")
        XCTAssertEqual(DurationText.short(59), "<1m")
        XCTAssertEqual(DurationText.short(0), "0m")
    }

    // MARK: - JSON

    func testJSONIsStableSortedAndRoundTrips() throws {
        let (daily, weekly) = try fixedReports()
        let renderer = JSONReportRenderer()
        let text = try renderer.render(daily)
        XCTAssertEqual(text, try renderer.render(fixedReports(FixedWeek.records.reversed()).0))
        XCTAssertTrue(text.contains("\"2026-03-08T06:45:00Z\""), "ISO 8601 first pickup")
        XCTAssertTrue(text.contains("\"2026-03-08\""), "the day as YYYY-MM-DD")
        let keys = ["\"apps\"", "\"categories\"", "\"context\"", "\"day\"", "\"end\""].map { text.range(of: $0)!.lowerBound }
        XCTAssertEqual(keys, keys.sorted(), "top-level keys are sorted")

        let decoder = JSONReportRenderer.makeDecoder()
        XCTAssertEqual(try decoder.decode(DailyReport.self, from: Data(text.utf8)), daily)
        let weeklyText = try renderer.render(weekly)
        XCTAssertEqual(try decoder.decode(WeeklyReport.self, from: Data(weeklyText.utf8)), weekly)
        let object = try JSONSerialization.jsonObject(with: Data(weeklyText.utf8)) as? [String: Any]
        XCTAssertEqual(object?["context"] as? String, "weekly")
    }

    // MARK: - Terminal

    func testTerminalDailyTableIsAligned() throws {
        let text = TerminalReportRenderer().render(try fixedReports().0)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines[0], "Daily report · Sunday, 8 March 2026 · Europe/Berlin")
        XCTAssertTrue(lines.contains("Screen time       2h 50m        Pickups              5"))
        XCTAssertTrue(lines.contains("First pickup      07:45 WhatsApp"))
        // Name 22 + 2 + category 16 + 2, then the time right-aligned in 8 columns, then the bar.
        let expected = [("Instagram", "1h 30m", 20), ("Notes", "45m", 10), ("Mail", "20m", 4), ("WhatsApp", "15m", 3)]
        for (app, time, bar) in expected {
            let line = try XCTUnwrap(lines.first { $0.hasPrefix(app + " ") }, app)
            let characters = Array(line)
            XCTAssertEqual(String(characters[42..<50]), String(repeating: " ", count: 8 - time.count) + time, app)
            XCTAssertEqual(String(characters[52...]), String(repeating: "█", count: bar), app)
        }
        XCTAssertTrue(lines.contains { $0.hasPrefix("example.com") && $0.contains("40m") })
        // Hours 0, 8, 9, 10, 12, 20, 21, 22 used; 1200 s is 2.67 eighths of an hour → "▃".
        XCTAssertTrue(lines.contains(String(repeating: " ", count: 24) + "▃·······▂▃▆·▂·······▃▄▂·"))
        XCTAssertTrue(lines.contains("This morning      Yesterday you used 2 grace passes."))
    }

    func testTerminalWeeklyListsEveryDayAndTheHeatmap() throws {
        let text = TerminalReportRenderer().render(try fixedReports().1)
        XCTAssertTrue(text.hasPrefix("Weekly report · 2 Mar – 8 Mar 2026 · Europe/Berlin\n"))
        for label in ["Mon  2 Mar", "Tue  3 Mar", "Wed  4 Mar", "Thu  5 Mar", "Fri  6 Mar", "Sat  7 Mar", "Sun  8 Mar"] {
            XCTAssertEqual(text.components(separatedBy: "\n" + label).count - 1, 2, "\(label) in the day table and the heatmap")
        }
        XCTAssertTrue(text.contains("\nSun  8 Mar" + String(repeating: " ", count: 34) + "2h 50m  " + String(repeating: "█", count: 20)))
        XCTAssertTrue(text.contains("\nWeek total" + String(repeating: " ", count: 33) + "10h 40m"))
        XCTAssertTrue(text.contains("\nTue  3 Mar" + String(repeating: " ", count: 14) + String(repeating: "·", count: 24)))
    }

    // MARK: - HTML

    private func renderHTML(_ records: [UsageRecord] = FixedWeek.records) throws -> String {
        let (daily, weekly) = try fixedReports(records)
        return HTMLReportRenderer().render(daily: daily, weekly: weekly)
    }

    func testHTMLIsWellFormedAndSelfContained() throws {
        let html = try renderHTML()
        #if canImport(FoundationXML) || os(macOS)
        let document = try XMLDocument(xmlString: html, options: [])
        XCTAssertEqual(document.rootElement()?.name, "html")
        let svgs = try document.nodes(forXPath: "//svg")
        XCTAssertEqual(svgs.compactMap { ($0 as? XMLElement)?.attribute(forName: "class")?.stringValue },
                       ["chart donut", "chart day-bars", "chart heatmap", "chart heatmap compact"], "one SVG per chart, the heatmap also for phones")
        // 7 days × 24 hours, each with a tooltip.
        XCTAssertEqual(try document.nodes(forXPath: "//svg[@class='chart heatmap']/rect[title]").count, 168)
        let weekdays = try document.nodes(forXPath: "//svg[@class='chart day-bars']/text[contains(@class,'day')]")
        XCTAssertEqual(weekdays.map { $0.stringValue ?? "" }, ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"])
        let donutTotal = try document.nodes(forXPath: "//svg[@class='chart donut']/text[@class='donut-total']")
        XCTAssertEqual(donutTotal.first?.stringValue, "2h 50m")
        XCTAssertEqual(try document.nodes(forXPath: "//table[@class='apps']/tbody/tr").count, 4)
        #else
        XCTAssertEqual(html.components(separatedBy: "<svg").count - 1, 4)
        #endif
        for forbidden in ["http://", "https://", "<script", "src=", "href=", "url(", "@import", "<link"] {
            XCTAssertFalse(html.lowercased().contains(forbidden), "no external reference: \(forbidden)")
        }
        XCTAssertEqual(html.components(separatedBy: "<svg").count - 1, 4)
        XCTAssertTrue(html.contains("Yesterday you used 2 grace passes."))
        XCTAssertTrue(html.contains("Great job maintaining healthy habits!"))
    }

    func testHTMLEscapesNames() throws {
        let name = "<Tom & \"Jerry\">"
        var records = FixedWeek.records
        records.append(.appUsage(app: name, category: "Games & <Fun>", start: Berlin.at("2026-03-08 16:00"),
                                 end: Berlin.at("2026-03-08 16:30")))
        records.append(.webUsage(domain: "a'b.example", start: Berlin.at("2026-03-08 17:00"),
                                 end: Berlin.at("2026-03-08 17:05"), isPrivate: false))
        let html = try renderHTML(records)
        XCTAssertFalse(html.contains(name))
        XCTAssertFalse(html.contains("<Fun>"))
        XCTAssertTrue(html.contains("&lt;Tom &amp; &quot;Jerry&quot;&gt;"))
        XCTAssertTrue(html.contains("Games &amp; &lt;Fun&gt;"))
        XCTAssertTrue(html.contains("a&#39;b.example"))
        #if canImport(FoundationXML) || os(macOS)
        let document = try XMLDocument(xmlString: html, options: [])
        let cells = try document.nodes(forXPath: "//table[@class='apps']/tbody/tr/td[1]").map { $0.stringValue ?? "" }
        XCTAssertTrue(cells.contains(name), "the escaped name reads back unchanged: \(cells)")
        #endif
    }

    func testHTMLIsDeterministic() throws {
        XCTAssertEqual(try renderHTML(), try renderHTML())
        XCTAssertEqual(try renderHTML(), try renderHTML(FixedWeek.records.reversed()), "record order does not change a byte")
    }

    func testHTMLEmptyDayStillRenders() throws {
        let ledger = UsageLedger(timeZone: Berlin.zone)
        let html = HTMLReportRenderer().render(daily: ledger.dailyReport(for: FixedWeek.sunday),
                                               weekly: ledger.weeklyReport(endingOn: FixedWeek.sunday))
        XCTAssertTrue(html.contains("No app usage recorded today."))
        XCTAssertTrue(html.contains("No app usage this week."))
        XCTAssertEqual(html.components(separatedBy: "<svg").count - 1, 4)
    }

    func testHeatColourRampAndAxis() {
        XCTAssertEqual(ChartPalette.heat(0), "#eef0f6")
        XCTAssertEqual(ChartPalette.heat(3600), "#342cb4")
        XCTAssertEqual(ChartPalette.heat(7200), "#342cb4", "a repeated DST hour is capped at a full hour")
        XCTAssertEqual(DayBarChart.axis(longest: 10200).maximum, 3)
        XCTAssertEqual(DayBarChart.axis(longest: 0).maximum, 1)
        XCTAssertEqual(DayBarChart.axis(longest: 9 * 3600 + 1).maximum, 10)
        XCTAssertEqual(HTMLText.number(-0.001), "0")
        XCTAssertEqual(HTMLText.number(12.5), "12.5")
        XCTAssertEqual(HTMLText.number(3.14159), "3.14")
    }
}
