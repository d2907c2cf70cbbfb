import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// A short-lived extension never loses a callback (issue #9): callbacks due at one instant, each writing a key its
/// monitor hears itself before an OS call, and device restarts — through the real broker and real extension processes.
extension ShortLivedExtensionTests {
    /// A device in Berlin whose only plugin is the monitor fixture `monitor` (no companion app runs), with an
    /// App-Group slice `monitor.*` when `appGroup` is given.
    static func configuration(_ name: String, monitor: String, appGroup: String? = nil) -> String {
        var text = "name: \(name)\ntimeZone: Europe/Berlin\ndevice: {companionApp: Habit Lock}\n"
        if let appGroup { text += "appGroups:\n  - {name: \(appGroup), slices: {monitor: [\"monitor.*\"]}}\n" }
        return text + "plugins:\n  - {name: monitor, executable: \(BuildProducts.path(monitor)), role: monitor\(appGroup.map { ", appGroup: \($0)" } ?? "")}\n"
    }

    /// Main's SDK acknowledged the highest seq it had seen (a reply's) and kept an extension's process past its
    /// callback when events came during a call: the ack covered callbacks delivered but not yet read, so the
    /// process ended without them and the broker did not give them again (lost, or handled a stretch late at the
    /// next launch), and which ones depended on process timing. Now: one process per callback, every callback
    /// handled once, at its instant, in order, and the same journal every time.
    func testCallbacksArrivingDuringAnOSCallAreEachHandledOnceAtTheirInstant() throws {
        let configuration = Self.configuration("echo", monitor: "fixture-echo-monitor", appGroup: "group.dev.shieldbus.echo")
        // The monitor's three activities start together 5 minutes in and every 20 minutes after; one restart comes
        // at such an instant (its callbacks due while the device restarts), one between two.
        for (day, (start, between)) in [(7, 52), (38, 61)].enumerated() {
            let scenario = """
            name: echo-\(day)
            start: 2026-11-23T06:\(String(format: "%02d", start))
            steps:
              - {after: 45m, restart: true}
              - {after: \(between)m, restart: true}
            end: after 40m

            """
            var journals: [Data] = []
            for _ in 0..<2 {
                let run = try ScenarioRun.run(configuration: configuration, scenario: scenario, arguments: ["--profile", "ios-realistic", "--seed", "\(day)"])
                XCTAssertEqual(run.exitStatus, 0, run.errors)
                XCTAssertEqual(run.events("bus.error").map { $0.bodyValue["code"]?.stringValue ?? "" }, [], "day \(day)")
                let callbacks = run.journal.filter { $0.topic.hasPrefix("deviceactivity.interval-did-") }
                let handled = run.events("x.monitor.handled")
                XCTAssertGreaterThan(callbacks.count, 20, "day \(day): callbacks three at a time, and the ends of the intervals registered again")
                XCTAssertEqual(handled.compactMap { $0.bodyValue["seq"]?.intValue }, callbacks.map { Int64($0.seq) },
                               "day \(day): every callback handled once, in order")
                let handledAt = Dictionary(handled.map { ($0.bodyValue["seq"]?.intValue ?? 0, $0.time) }) { first, _ in first }
                for callback in callbacks {
                    XCTAssertEqual(handledAt[Int64(callback.seq)], callback.time, "day \(day): \(callback.topic) seq \(callback.seq) handled at its instant")
                }
                XCTAssertEqual(Set(handled.compactMap { $0.bodyValue["inProcess"]?.intValue }), [1], "day \(day): one process per callback")
                XCTAssertEqual(run.events("device.restarted").count, 2)
                journals.append(run.journalBytes)
            }
            XCTAssertEqual(journals[0], journals[1], "day \(day): the journals differ\n\(scenario)")
        }
    }
}
