import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// A monitor that shields the app (or page) in front and then calls the OS again in the same callback: the OS's
/// request to the renderer takes its turn after the monitor's, and its reply deadline counts from that turn — so the
/// journal is the same whatever the processes' timing (#9, #12; explore focus-window 3921's replays) — through the
/// real broker, the fixture monitor and the fixture renderer, each a process.
final class ShieldRequestTurnTests: XCTestCase {
    static func configuration(minute: Int, workMilliseconds: Int) -> String {
        """
        name: shield-then-call
        timeZone: Europe/Berlin
        device: {companionApp: Habit Lock}
        quirks: {unreliable-far-schedules: false}
        appGroups:
          - {name: group.test.turns, slices: {monitor: ["monitor.*"]}}
        plugins:
          - {name: monitor, executable: \(BuildProducts.path("fixture-shield-then-call")), role: monitor, appGroup: group.test.turns,
             arguments: [--minute, "\(minute)", --hours, "10,14", --work-ms, "\(workMilliseconds)"]}
          - {name: shield, executable: \(BuildProducts.path("fixture-shield")), role: shield}
        """
    }

    /// In front at the 10 o'clock window: Instagram (shielded by the callback's first write); at 14 o'clock: a page
    /// (shielded by its second). The callback works longer than the OS's reply deadline (`device.replyTimeoutMs`, 1 s)
    /// between its first write and its next call: counted from the request, the deadline ran out while the request
    /// waited for its turn, and the default shield came down instead of the renderer's, at a point of the journal
    /// set by the processes' timing.
    func testTheRenderersTurnComesAfterTheMonitorsAndItsDeadlineCountsFromIt() throws {
        var days: [(configuration: String, scenario: String, arguments: [String])] = []
        for (minute, profile) in [(7, "faithful"), (52, "ios-realistic"), (31, "ios-realistic")] {
            let scenario = """
            name: shield-then-call-\(minute)
            start: 2026-11-23T09:30
            steps:
              - {at: "09:40", open: Instagram}
              - {at: "13:40", visit: "https://www.instagram.com/explore"}
            end: 2026-11-23T15:00

            """
            // Each day three times, side by side: the journals must not depend on which process ran when.
            days += Array(repeating: (Self.configuration(minute: minute, workMilliseconds: 1_100), scenario, ["--profile", profile]), count: 3)
        }
        let runs = try ScenarioRun.runAll(days, timeoutSeconds: 120)
        for (index, run) in runs.enumerated() {
            let day = "day \(index / 3) (\(days[index].arguments[1]))"
            XCTAssertEqual(run.exitStatus, 0, "\(day): \(run.errors.suffix(2000))")
            XCTAssertEqual(run.events("bus.error").compactMap { $0.bodyValue["code"]?.stringValue }, [], day)
            let shown = run.events("shield.shown")
            XCTAssertEqual(shown.map { $0.bodyValue["target"]?["application"]?["localizedDisplayName"]?.stringValue ?? $0.bodyValue["target"]?["webDomain"]?["domain"]?.stringValue ?? "?" },
                           ["Instagram", "instagram.com"], "\(day): one shield per window, over what is in front")
            XCTAssertEqual(shown.map { $0.bodyValue["renderedBy"]?.stringValue ?? "" }, ["shield", "shield"],
                           "\(day): the renderer drew them, within its deadline: \(shown.map { $0.bodyValue["fallbackReason"]?.stringValue ?? "" })")
            for request in run.events("shield.configuration.request") {
                // The monitor's last call of that callback (its App-Group write) comes before the renderer's answer.
                let callback = try XCTUnwrap(run.journal.last { $0.seq < request.seq && $0.topic == "deviceactivity.interval-did-start" }, day)
                let monitorsLast = try XCTUnwrap(run.journal.first { $0.seq > callback.seq && $0.topic == "state.changed" && $0.source == "monitor" }, day)
                let reply = try XCTUnwrap(run.journal.first { $0.topic == "shield.configuration.reply" && $0.corr == request.corr }, "\(day): no reply to \(request.corr ?? "?")")
                XCTAssertLessThan(monitorsLast.seq, reply.seq, "\(day): the renderer answered \(request.corr ?? "?") during the monitor's turn")
            }
        }
        for day in 0..<3 {
            for again in 1..<3 {
                XCTAssertEqual(runs[day * 3].journalBytes, runs[day * 3 + again].journalBytes, "day \(day): run \(again + 1)'s journal differs from run 1's")
            }
        }
    }
}
