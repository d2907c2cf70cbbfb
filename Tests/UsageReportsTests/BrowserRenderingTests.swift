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

    private static func executable(named name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}
