import AppGroupStore
import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import UsageReports
import XCTest

/// The span in progress survives the report builder's process: a device restart, a SIGKILL and the end of a
/// scenario lose no usage — through the real broker and the real report builder.
final class UsageInProgressTests: XCTestCase {
    let group = "group.test.reports"

    func stored(_ day: String, in state: String) throws -> DayUsage? {
        let container = AppGroupContainer(root: URL(fileURLWithPath: state + "/appgroups"))
        return try SharedDefaults(suiteName: group, container: container).value(DayUsage.self, forKey: "reports.day.\(day)")
    }

    func testADeviceRestartAndTheEndOfAScenarioLoseNoUsage() throws {
        let state = TemporaryDirectory(prefix: "sbspan")
        let scenario = """
            name: restart-mid-span
            start: 2026-11-23T09:00
            end: "09:30"
            steps:
              - {at: "09:00", open: Instagram}
              - {at: "09:10", restart: true}
              - {at: "09:20", open: TikTok}
            """
        for profile in ["faithful", "ios-realistic"] {
            let run = try ScenarioRun.run(configuration: ReportBuilderTests.configuration(), scenario: scenario,
                                          arguments: ["--profile", profile], stateDirectory: state.path)
            XCTAssertEqual(run.exitStatus, 0, run.errors)
            let day = try XCTUnwrap(try stored("2026-11-23", in: state.path), profile)
            XCTAssertEqual(day.appSeconds["Instagram"], 600, "\(profile): the ten minutes before the restart are kept")
            XCTAssertEqual(day.appSeconds["TikTok"], 600, "\(profile): the app still open at the end is stored up to the end")
        }
    }

    func testAReportBuilderKilledMidSpanReportsTheSameNumbers() throws {
        let broker = try BrokerProcess(configuration: ReportBuilderTests.configuration())
        defer { broker.stop() }
        let state = broker.runtime.path + "/state"
        func reports() -> JSONValue? { (try? broker.status())?["plugins"]?.arrayValue?.first { $0["name"] == "reports" } }
        waitUntil("the report builder to connect") { reports()?["connected"] == true }
        let firstPid = try XCTUnwrap(reports()?["pid"]?.intValue)
        let tap = try broker.connect(name: "span-tap", subscriptions: ["activity.app."])
        let person = try broker.connect(name: "person", role: .tool, subscriptions: [])

        try person.publish(Publish(topic: "input.open.request", body: ["app": "Instagram"], corr: "person-1"))
        let container = AppGroupContainer(root: URL(fileURLWithPath: state + "/appgroups"))
        let defaults = try SharedDefaults(suiteName: group, container: container)
        waitUntil("the report builder to keep the span") { (try? defaults.entry(forKey: "reports.recorder")) != nil }
        kill(pid_t(firstPid), SIGKILL)
        waitUntil("the report builder to come back") { reports()?["connected"] == true && reports()?["pid"]?.intValue != firstPid }
        try person.publish(Publish(topic: "input.home.request", body: [:], corr: "person-2"))

        let events = try collectEvents(from: tap) { $0.contains { $0.topic == "activity.app.closed" } }
        let opened = try XCTUnwrap(events.first { $0.topic == "activity.app.opened" })
        let closed = try XCTUnwrap(events.first { $0.topic == "activity.app.closed" })
        let expected = TimeInterval(closed.time - opened.time) / 1000
        XCTAssertGreaterThan(expected, 0)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = TimeZone(identifier: "Europe/Berlin")
        let day = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(opened.time) / 1000))
        waitUntil("the span to be stored") { ((try? stored(day, in: state))??.appSeconds["Instagram"] ?? 0) > 0 }
        let seconds = try XCTUnwrap(try stored(day, in: state)?.appSeconds["Instagram"])
        XCTAssertEqual(seconds, expected, accuracy: 0.001, "from the open to the close, across the kill")
    }
}
