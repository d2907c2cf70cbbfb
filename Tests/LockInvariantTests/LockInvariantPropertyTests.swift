import BusProtocol
import Configuration
import Foundation
import LockInvariant
import XCTest

/// Many generated journals around the tricky boundaries — focus windows at any minute (past midnight too), DST
/// nights, use starting and ending near a window's edges — judged by the checker and by a simple oracle written
/// here: walk every second, ask the wall clock whether it is in the window, and count the seconds since the lock
/// (or the permission) began.
final class LockInvariantPropertyTests: XCTestCase {
    /// Nights with and without a DST change, in two zones.
    static let nights: [(zone: String, start: String)] = [
        ("Europe/Berlin", "2026-11-22T12:00Z"), ("Europe/Berlin", "2026-10-24T12:00Z"), ("Europe/Berlin", "2026-03-28T12:00Z"),
        ("America/New_York", "2026-10-31T16:00Z"), ("America/New_York", "2026-03-07T16:00Z"),
    ]

    func testGeneratedFocusDaysAgreeWithASecondBySecondOracle() {
        var random = SeededRandom(seed: 20_261_123)
        let length = 36 * 3600  // seconds judged from the start
        for round in 0..<60 {
            let night = Self.nights[round % Self.nights.count]
            let zone = TimeZone(identifier: night.zone)!
            var journal = JournalBuilder(zone: night.zone, start: night.start)
            let start = journal.instant(night.start)
            // A window on whole minutes; its end may be before its start (it ends the next day) — or be midnight.
            let windowStart = Int.random(in: 0...1439, using: &random) * 60
            let windowEnd = Int.random(in: 0...3, using: &random) == 0 ? 0 : Int.random(in: 0...1439, using: &random) * 60
            guard windowStart != windowEnd else { continue }
            // Offsets change on whole minutes in these zones: one look-up a minute.
            let offsets = (0...length / 60).map { zone.secondsFromGMT(for: start.addingTimeInterval(Double($0 * 60))) }
            let inWindow = { (second: Int) -> Bool in
                let local = Int(start.timeIntervalSince1970) + second + offsets[second / 60]
                let ofDay = ((local % 86_400) + 86_400) % 86_400
                return windowStart < windowEnd ? (windowStart..<windowEnd).contains(ofDay) : (ofDay >= windowStart || ofDay < windowEnd)
            }
            // The oracle's view of every second: locked or not, and since when.
            var locked = [Bool](repeating: false, count: length + 1), since = [Int](repeating: 0, count: length + 1)
            for second in 0...length {
                locked[second] = inWindow(second)
                since[second] = second > 0 && locked[second] == locked[second - 1] ? since[second - 1] : second
            }
            // Use and shields, each a few seconds to a few hours, many of them starting near an edge of the lock.
            let edges = (1...length).filter { locked[$0] != locked[$0 - 1] }
            var expected: Set<String> = []
            var cursor = 0
            while cursor < length - 7200 {
                var from = cursor + Int.random(in: 0...5400, using: &random)
                var to = from + [Int.random(in: 0...90, using: &random), Int.random(in: 0...600, using: &random), Int.random(in: 0...9000, using: &random)][Int.random(in: 0...2, using: &random)]
                if let edge = edges.first(where: { $0 > cursor + 130 }) {
                    switch Int.random(in: 0...2, using: &random) {
                    case 0: break
                    case 1: from = edge + Int.random(in: -120...120, using: &random)  // starts near an edge
                    default: (from, to) = (edge - Int.random(in: 0...120, using: &random), edge + 60 + Int.random(in: -2...2, using: &random))  // ends at the grace minute
                    }
                }
                from = min(from, length - 2)
                to = max(from, min(length - 1, to))
                let app = Int.random(in: 0...1, using: &random) == 0 ? "Instagram" : "TikTok"
                if Int.random(in: 0...2, using: &random) == 0 {
                    journal.shield(Self.utc(start, from), journal.app(app))
                    journal.dismiss(Self.utc(start, to), app)
                    if (from...to).contains(where: { !locked[$0] && $0 - since[$0] >= 60 }) { expected.insert("shielded \(app) \(from)") }
                } else {
                    journal.open(Self.utc(start, from), app)
                    journal.close(Self.utc(start, to), app)
                    if (from..<max(from, to)).contains(where: { locked[$0] && $0 - since[$0] >= 60 }) { expected.insert("usable \(app) \(from)") }
                }
                cursor = to + 1
            }
            journal.end(Self.utc(start, length))
            let product = Products.focusWindow([(Self.clock(windowStart), Self.clock(windowEnd))])
            let found = LockInvariantChecker(products: [product], timeZone: zone).verdicts(for: journal.envelopes)[0].violations
            // One violation per span at most here (a span crosses at most one edge of the lock within its length, or
            // is reported per lock it overlaps): compare which spans broke the invariant.
            let spans = Set(found.map { violation -> String in
                let first = journal.envelopes.last { envelope in
                    let at = Date(timeIntervalSince1970: Double(envelope.time) / 1000)
                    return at <= violation.from && ["activity.app.opened", "shield.shown"].contains(envelope.topic)
                        && envelope.bodyValue["application"]?["localizedDisplayName"]?.stringValue ?? envelope.bodyValue["target"]?["application"]?["localizedDisplayName"]?.stringValue == violation.target
                }!
                let offset = Int((Double(first.time) / 1000 - start.timeIntervalSince1970).rounded())
                return "\(violation.kind == .usableWhileLocked ? "usable" : "shielded") \(violation.target) \(offset)"
            })
            XCTAssertEqual(spans, expected, "round \(round): window \(Self.clock(windowStart))–\(Self.clock(windowEnd)) in \(night.zone) from \(night.start)")
        }
    }

    static func utc(_ start: Date, _ second: Int) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: start.addingTimeInterval(Double(second)))
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
    }

    static func clock(_ seconds: Int) -> String { String(format: "%02d:%02d", seconds / 3600, seconds / 60 % 60) }
}
