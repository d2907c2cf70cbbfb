import Foundation
import XCTest
@testable import ScreenTime

/// An instant from an ISO 8601 UTC string such as "2026-03-08T07:00:00Z".
func utc(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> Date {
    guard let date = ISO8601DateFormatter().date(from: text) else {
        XCTFail("bad test date \(text)", file: file, line: line)
        return .distantPast
    }
    return date
}

/// The interval between two ISO 8601 UTC strings.
func utcInterval(_ start: String, _ end: String) -> DateInterval {
    DateInterval(start: utc(start), end: utc(end))
}

func zone(_ identifier: String) -> TimeZone {
    TimeZone(identifier: identifier)!
}

let newYork = ScheduleCalendar(timeZone: zone("America/New_York"))
let berlin = ScheduleCalendar(timeZone: zone("Europe/Berlin"))
let utcCalendar = ScheduleCalendar(timeZone: zone("UTC"))

func app(_ raw: String) -> ApplicationToken { ApplicationToken(rawValue: raw) }
func category(_ raw: String) -> ActivityCategoryToken { ActivityCategoryToken(rawValue: raw) }
func domain(_ raw: String) -> WebDomainToken { WebDomainToken(rawValue: raw) }

/// Encodes with sorted keys and ISO 8601 dates, as the bus is expected to.
func encodeJSON<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

func decodeJSON<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try decoder.decode(type, from: Data(json.utf8))
}

/// Encodes, decodes and checks the value came back equal; returns the JSON.
@discardableResult
func assertRoundTrip<T: Codable & Equatable>(_ value: T, file: StaticString = #filePath, line: UInt = #line) throws -> String {
    let json = try encodeJSON(value)
    XCTAssertEqual(try decodeJSON(T.self, json), value, "round trip of \(json)", file: file, line: line)
    return json
}
