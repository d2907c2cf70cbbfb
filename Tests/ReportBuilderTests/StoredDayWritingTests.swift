import AppGroupStore
import Configuration
import Foundation
@testable import ReportBuilderExtension
import SortedJSON
import UsageReports
import XCTest

/// The report builder's day and recorder, written byte by byte (`StoredJSONWritable`), are the very bytes
/// `SortedJSONEncoder` writes for them with dates as seconds, as every App-Group value is encoded: over days made
/// by the ledger from drawn records, days and recorders decoded from drawn JSON (doubles whole, fractional, tiny,
/// huge and negative zero; keys whose byte order is not their `String` order; strings needing escapes), and through
/// the store itself.
final class StoredDayWritingTests: XCTestCase {
    static let strings = ["Instagram", "", "say \"hi\"", "back\\slash", "https://example.com/a/b", "tab\there", "line\nbreak",
                          "\u{00}\u{01}\u{1F}\u{7F}", "Café", "e\u{301}", "日本語", "👩‍👩‍👧", "\u{2028}", "Z", "a", "ß", "\u{FF5E}", "𝄞"]
    static let doubles: [Double] = [0, -0.0, 1, 0.5, 59.999, 3600, 1e-7, 123.456789, 1e15, 9_007_199_254_740_991, 9_007_199_254_740_992,
                                    1e16, 1.5e300, -2.25, 1_795_410_000.123, 1_795_410_000, .leastNonzeroMagnitude, .greatestFiniteMagnitude]

    struct Draw: RandomNumberGenerator {
        var random: SeededRandom
        init(state: UInt64) { random = SeededRandom(seed: state) }
        mutating func next() -> UInt64 { random.next() }
        mutating func string() -> String { StoredDayWritingTests.strings.randomElement(using: &self)! }
        /// A name the ledger takes (it refuses one that is empty or blank).
        mutating func name() -> String {
            StoredDayWritingTests.strings.filter { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }.randomElement(using: &self)!
        }
        mutating func double() -> Double {
            switch Int.random(in: 0...3, using: &self) {
            case 0: StoredDayWritingTests.doubles.randomElement(using: &self)!
            case 1: Double(Int.random(in: 0...86_400, using: &self))
            case 2: Double.random(in: 0...86_400, using: &self)
            default: Double(bitPattern: next() & 0x7FEF_FFFF_FFFF_FFFF)
            }
        }
        mutating func members(_ value: (inout Draw) -> Any) -> [String: Any] {
            Dictionary((0..<Int.random(in: 0...6, using: &self)).map { _ in (string(), value(&self)) }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// What `ValueCoding` stores for a value: `SortedJSONEncoder` with dates as seconds.
    func encoded<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try SortedJSONEncoder(dates: .secondsSince1970).encode(value), as: UTF8.self)
    }

    func decoded<T: Decodable>(_ type: T.Type, _ object: [String: Any]) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(type, from: JSONSerialization.data(withJSONObject: object))
    }

    func testDaysDecodedFromDrawnJSONAreWrittenAsTheEncoderWritesThem() throws {
        var draw = Draw(state: 1)
        for _ in 0..<3_000 {
            var object: [String: Any] = [
                "day": "2026-11-\(Int.random(in: 10...28, using: &draw))", "timeZoneIdentifier": draw.string(),
                "hourlySeconds": (0..<24).map { _ in draw.double() },
                "appSeconds": draw.members { $0.double() }, "appCategories": draw.members { $0.string() },
                "categorySeconds": draw.members { $0.double() }, "webDomainSeconds": draw.members { $0.double() },
                "pickups": draw.members { _ in Int.random(in: -3...1_000_000) }, "notifications": draw.members { _ in Int.random(in: 0...500) },
                "shieldEncounters": draw.members { _ in [0, 1, Int.max, Int.min].randomElement()! },
                "gracePassesUsed": Int.random(in: 0...50, using: &draw), "nudgesUsed": [0, 3, Int.max].randomElement(using: &draw)!,
            ]
            if Bool.random(using: &draw) {
                object["firstPickup"] = ["app": draw.string(), "at": draw.double(), "clockTime": draw.string()]
            }
            let day = try decoded(DayUsage.self, object)
            let expected = try encoded(day)
            XCTAssertEqual(day.storedJSON.map { String(decoding: $0, as: UTF8.self) }, expected)
            if day.storedJSON.map({ String(decoding: $0, as: UTF8.self) }) != expected { return }
        }
    }

    func testDaysTheLedgerMakesAreWrittenAsTheEncoderWritesThem() throws {
        var draw = Draw(state: 2)
        var ledger = UsageLedger(timeZone: TimeZone(identifier: "Europe/Berlin")!)
        var now = Date(timeIntervalSince1970: 1_795_410_000)
        for _ in 0..<2_000 {
            let start = now
            now += Double.random(in: 0.001...900, using: &draw)
            let record: UsageRecord = switch Int.random(in: 0...6, using: &draw) {
            case 0: .appUsage(app: draw.name(), category: draw.name(), start: start, end: now)
            case 1: .webUsage(domain: draw.name(), start: start, end: now, isPrivate: false)
            case 2: .pickup(app: draw.name(), at: now)
            case 3: .notification(source: draw.name(), at: now)
            case 4: .shieldEncounter(target: draw.name(), at: now)
            case 5: .gracePassUsed(at: now)
            default: .nudgeUsed(at: now)
            }
            for day in try ledger.ingest(record) {
                let usage = try XCTUnwrap(ledger.usage(on: day))
                XCTAssertEqual(usage.storedJSON.map { String(decoding: $0, as: UTF8.self) }, try encoded(usage))
            }
        }
    }

    func testRecordersAreWrittenAsTheEncoderWritesThem() throws {
        var draw = Draw(state: 3)
        for _ in 0..<3_000 {
            var object: [String: Any] = [:]
            if Bool.random(using: &draw) {
                let subject: [String: Any] = Bool.random(using: &draw)
                    ? ["app": ["name": draw.string(), "category": draw.string()]] : ["web": ["domain": draw.string()]]
                object["inUse"] = ["since": draw.double(), "subject": subject]
            }
            object["origin"] = [["home": [String: Any]()], ["away": [String: Any]()], ["shieldedFromHome": ["app": draw.string()]]]
                .randomElement(using: &draw)!
            if Bool.random(using: &draw) { object["shieldedTarget"] = draw.string() }
            let recorder = try decoded(UsageRecorder.self, object)
            let expected = try encoded(recorder)
            XCTAssertEqual(recorder.storedJSON.map { String(decoding: $0, as: UTF8.self) }, expected)
            if recorder.storedJSON.map({ String(decoding: $0, as: UTF8.self) }) != expected { return }
        }
        XCTAssertEqual(try encoded(UsageRecorder()), UsageRecorder().storedJSON.map { String(decoding: $0, as: UTF8.self) })
    }

    /// Through the store: the overload a `DayUsage` takes stores the encoder's bytes and type tag.
    func testTheStoreKeepsTheEncodersTextAndTypeTag() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stored-day-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let container = AppGroupContainer(root: folder)
        _ = try container.createGroup("group.test.days")
        try container.declareSlices(group: "group.test.days", ["reports": ["reports.*"]])
        let defaults = try SharedDefaults(suiteName: "group.test.days", container: container, writer: "reports")
        var ledger = UsageLedger(timeZone: TimeZone(identifier: "Europe/Berlin")!)
        let start = Date(timeIntervalSince1970: 1_795_420_000.25)
        let days = try ledger.ingest(.appUsage(app: "Café \"x\"", category: "Social", start: start, end: start.addingTimeInterval(4_000.5)))
        let usage = try XCTUnwrap(ledger.usage(on: try XCTUnwrap(days.first)))
        try defaults.transaction { try $0.set(usage, forKey: "reports.day.x") }
        let entry = try XCTUnwrap(try defaults.entry(forKey: "reports.day.x"))
        XCTAssertEqual(entry.rawJSON, try encoded(usage))
        XCTAssertEqual(entry.typeTag, "DayUsage")
        XCTAssertEqual(try defaults.value(DayUsage.self, forKey: "reports.day.x"), usage)
    }
}
