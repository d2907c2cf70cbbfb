import Foundation
import XCTest
import UsageReports

/// Renders the HTML report in a real browser (headless Chromium) and checks a real
/// screenshot comes out. Set USAGEREPORTS_SAMPLE_DIR to keep the page, the PNG and the
/// text and JSON renderings of the same sample there.
final class BrowserRenderingTests: XCTestCase {
    private static let timeout: TimeInterval = 120

    func testChromiumRendersTheReport() throws {
        guard let chromium = Self.executable(named: "chromium") else {
            throw XCTSkip("chromium is not on PATH; install it with `apt-get install -y chromium` (Debian) to run this check")
        }
        var generator = SyntheticUsage(seed: 7)
        var ledger = UsageLedger(timeZone: Berlin.zone)
        try ledger.ingest(contentsOf: generator.records(days: 14, endingOn: Berlin.day("2026-03-08")).records)
        let daily = ledger.dailyReport(for: FixedWeek.sunday)
        let weekly = ledger.weeklyReport(endingOn: FixedWeek.sunday)
        let html = HTMLReportRenderer().render(daily: daily, weekly: weekly)

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("usagereports-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = folder.appendingPathComponent("report.html")
        let screenshot = folder.appendingPathComponent("report.png")
        try html.write(to: page, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = chromium
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                             "--user-data-dir=\(folder.appendingPathComponent("profile").path)",
                             "--screenshot=\(screenshot.path)", "--window-size=1200,1600", page.absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        if exited.wait(timeout: .now() + Self.timeout) == .timedOut {
            process.terminate()
            XCTFail("chromium did not finish within \(Int(Self.timeout)) s")
            return
        }

        let png = try Data(contentsOf: screenshot)
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "PNG signature")
        XCTAssertGreaterThan(png.count, 10_000, "a page with charts is more than a blank screenshot")

        if let samples = ProcessInfo.processInfo.environment["USAGEREPORTS_SAMPLE_DIR"] {
            let target = URL(fileURLWithPath: samples)
            try html.write(to: target.appendingPathComponent("sample-report.html"), atomically: true, encoding: .utf8)
            try png.write(to: target.appendingPathComponent("sample-report.png"))
            let terminal = TerminalReportRenderer()
            try terminal.render(daily).write(to: target.appendingPathComponent("sample-daily.txt"), atomically: true, encoding: .utf8)
            try terminal.render(weekly).write(to: target.appendingPathComponent("sample-weekly.txt"), atomically: true, encoding: .utf8)
            let json = JSONReportRenderer()
            try json.render(daily).write(to: target.appendingPathComponent("sample-daily.json"), atomically: true, encoding: .utf8)
            try json.render(weekly).write(to: target.appendingPathComponent("sample-weekly.json"), atomically: true, encoding: .utf8)
        }
    }

    /// The daily page and a month's page, at a phone's 390 px and a desktop's 1280 px, light and dark, laid out by
    /// Chromium and measured from the DOM (Tests/Browser/report-layout.py): no element reaches past the page's width, the
    /// page does not scroll sideways, the colour scheme is the one asked for, and the heatmap a phone gets is the
    /// compact one with labels at least 9 px tall.
    func testTheLayoutFitsPhonesAndDesktopsInLightAndDark() throws {
        guard Self.executable(named: "chromium") != nil, let python = Self.executable(named: "python3") else {
            throw XCTSkip("chromium or python3 is not on PATH (`make deps` installs them): the layout was not measured")
        }
        var generator = SyntheticUsage(seed: 21)
        var ledger = UsageLedger(timeZone: Berlin.zone)
        try ledger.ingest(contentsOf: generator.records(days: 40, endingOn: Berlin.day("2026-03-31")).records)
        // Long names must wrap or be cut, not widen the page.
        try ledger.ingest(.appUsage(app: "Extraordinarily Long Application Name Pro Max Edition", category: "Productivity & Finance",
                                    start: Berlin.at("2026-03-31 09:00"), end: Berlin.at("2026-03-31 09:30")))
        try ledger.ingest(.webUsage(domain: "a-remarkably-long-subdomain.of-an-even-longer-domain-name.example", start: Berlin.at("2026-03-31 10:00"),
                                    end: Berlin.at("2026-03-31 10:20"), isPrivate: false))
        let day = Berlin.at("2026-03-31 12:00")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("usagereports-layout-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pages = [
            ("daily", HTMLReportRenderer().render(daily: ledger.dailyReport(for: day), weekly: ledger.weeklyReport(endingOn: day))),
            ("monthly", HTMLReportRenderer().render(range: ledger.monthlyReport(for: try XCTUnwrap(LocalMonth("2026-03"))))),
        ]
        let tool = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Tests/Browser/report-layout.py").standardized
        for (name, html) in pages {
            let page = folder.appendingPathComponent("\(name).html")
            try html.write(to: page, atomically: true, encoding: .utf8)
            for width in [390, 1280] {
                for dark in [false, true] {
                    let label = "\(name) at \(width) px, \(dark ? "dark" : "light")"
                    let measured = try Self.measure(python: python, tool: tool, page: page, width: width, dark: dark)
                    XCTAssertEqual(measured.width, width, label)
                    XCTAssertEqual(measured.scrollWidth, width, "\(label): no sideways scrolling")
                    XCTAssertEqual(measured.overflowing, [], "\(label): elements past the edge")
                    XCTAssertEqual(measured.dark, dark, label)
                    XCTAssertEqual(measured.background, dark ? "rgb(17, 19, 32)" : "rgb(244, 245, 249)", "\(label): the page's background")
                    XCTAssertGreaterThanOrEqual(measured.smallestHeatmapLabel ?? 0, 9, "\(label): heatmap labels readable")
                    if name == "daily" {
                        XCTAssertEqual([measured.visibleHeatmaps, measured.visibleCompactHeatmaps], width < 600 ? [0, 1] : [1, 0], label)
                    }
                }
            }
        }
    }

    private struct Layout: Decodable {
        let width: Int
        let scrollWidth: Int
        let dark: Bool
        let background: String
        let overflowing: [String]
        let smallestHeatmapLabel: Double?
        let visibleHeatmaps: Int
        let visibleCompactHeatmaps: Int
    }

    private static func measure(python: URL, tool: URL, page: URL, width: Int, dark: Bool) throws -> Layout {
        let process = Process()
        process.executableURL = python
        process.arguments = [tool.path, "measure", page.path, "--width", "\(width)"] + (dark ? ["--dark"] : [])
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "report-layout.py measure failed")
        return try JSONDecoder().decode(Layout.self, from: data)
    }

    private static func executable(named name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}
