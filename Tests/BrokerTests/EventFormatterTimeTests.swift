import BusProtocol
@testable import BusTools
import DeviceAPI
import Foundation
import XCTest

/// The timeline's day, time and kind column of an event: written without `String(format:)` and `padding`, and for a run's
/// events in order with the day and the clock of the last second kept — each the very text Foundation's calls give.
final class EventFormatterTimeTests: XCTestCase {
    /// What `dayAndTime` wrote with `String(format:)`, for comparison.
    private func formatted(_ time: BusTime, in zone: TimeZone) -> (day: String, time: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: Double(time) / 1000))
        let millis = Int(((time % 1000) + 1000) % 1000)
        return (String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!),
                String(format: "%02d:%02d:%02d.%03d", c.hour!, c.minute!, c.second!, millis))
    }

    /// Times around Berlin's and New York's clock changes, midnights, second edges, before 1970 and 1582, and far ahead.
    private var times: [BusTime] {
        var times: [BusTime] = []
        let anchors: [BusTime] = [0, 1_774_746_000_000, 1_792_890_000_000, 1_773_471_600_000, 1_793_602_800_000, 1_764_543_600_000,
                                  -1, -999, -1_000, -1_001, -86_400_000, -12_219_292_800_000, -62_135_596_800_001, 253_402_300_799_999]
        for anchor in anchors {
            for offset: BusTime in [-3_600_001, -3_600_000, -1_001, -1_000, -999, -1, 0, 1, 999, 1_000, 1_001, 3_599_999, 3_600_000] {
                times.append(anchor + offset)
            }
        }
        // Spread over about 1811–2128 by a fixed sequence (the same times at every run).
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            times.append(BusTime(state >> 21) % 10_000_000_000_000 - 5_000_000_000_000)
        }
        return times
    }

    func testDayAndTimeIsWhatStringFormatWrites() {
        for name in ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "UTC"] {
            let formatter = EventFormatter(settings: ["timeZone": .string(name)])
            for time in times {
                let expected = formatted(time, in: formatter.timeZone)
                let got = formatter.dayAndTime(time)
                XCTAssertEqual(got.day, expected.day, "\(name) \(time)")
                XCTAssertEqual(got.time, expected.time, "\(name) \(time)")
            }
        }
    }

    func testTimesInOrderGiveWhatEachGivesAlone() {
        for name in ["Europe/Berlin", "America/New_York", "UTC"] {
            var formatter = EventFormatter(settings: ["timeZone": .string(name)])
            // In order, many in one second, across clock changes and midnights; then back in time, as a restarted
            // broker's journal may go.
            var inOrder = times.filter { $0 >= 0 }.sorted()
            inOrder += inOrder.flatMap { [$0, $0 + 1, $0 + 2] }.sorted()
            inOrder += [1_792_890_000_500, 1_792_890_000_499, 5, 1_792_890_000_500, -1, -1_500, 999]
            for time in inOrder {
                let expected = formatted(time, in: formatter.timeZone)
                let got = formatter.dayAndTime(ofNext: time)
                XCTAssertEqual(got.day, expected.day, "\(name) \(time)")
                XCTAssertEqual(got.time, expected.time, "\(name) \(time)")
            }
        }
    }

    func testPaddedIsWhatStringFormatWrites() {
        for value in [Int.min + 1, -12_345, -999, -100, -99, -10, -9, -1, 0, 1, 9, 10, 99, 100, 999, 1_000, 12_345, Int.max] {
            for width in 1...5 {
                XCTAssertEqual(EventFormatter.padded(value, to: width), String(format: "%0\(width)ld", value), "\(value) to \(width)")
            }
        }
    }

    func testAKindsColumnIsWhatPaddingWrites() {
        let topics = [DeviceTopic.scenarioStep, DeviceTopic.shieldShown, DeviceTopic.actionHandled, DeviceTopic.shieldDismissed, DeviceTopic.appOpened,
                      DeviceTopic.appClosed, DeviceTopic.webVisited, "deviceactivity.interval-did-start", DeviceTopic.notificationPosted,
                      DeviceTopic.notificationTapped, DeviceTopic.urlOpened, DeviceTopic.authorizationChanged, DeviceTopic.habitCompleted,
                      DeviceTopic.appAction, DeviceTopic.osUpdated, "device.quirk", Topic.clockChanged, "bus.error", "plugin.exited", "report.insight"]
        var kinds = Set(["BLOCK", "UNBLOCK"])
        for topic in topics {
            if let kind = Timeline.kind(of: Envelope(seq: 1, time: 0, topic: topic, source: "system", body: Array("{}".utf8))) { kinds.insert(kind) }
        }
        XCTAssertGreaterThan(kinds.count, 10)
        for kind in kinds.union(["", "a", "exactly10!", "longer than ten", "Café", "日本語", "👩‍👩‍👧 family", "exactly 9"]) {
            XCTAssertEqual(Timeline.column(kind), kind.padding(toLength: 10, withPad: " ", startingAt: 0), kind)
        }
    }
}
