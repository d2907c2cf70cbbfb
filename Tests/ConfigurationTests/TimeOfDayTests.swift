import Configuration
import XCTest

/// `LocalDateTime.timeOfDay` reads `HH:MM[:SS]` byte by byte; it must accept and reject exactly what the reading by
/// substrings and characters (kept here as the reference) does.
final class TimeOfDayTests: XCTestCase {
    private static func reference(_ text: String) -> (hour: Int, minute: Int, second: Int)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), (1...2).contains(parts[0].count), parts.dropFirst().allSatisfy({ $0.count == 2 }),
              parts.allSatisfy({ $0.allSatisfy { ("0"..."9").contains($0) } }) else { return nil }
        let hour = Int(parts[0])!, minute = Int(parts[1])!, second = parts.count == 3 ? Int(parts[2])! : 0
        guard hour < 24, minute < 60, second < 60 else { return nil }
        return (hour, minute, second)
    }

    private func assertSame(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        let read = LocalDateTime.timeOfDay(text), expected = Self.reference(text)
        XCTAssertEqual(read.map { [$0.hour, $0.minute, $0.second] }, expected.map { [$0.hour, $0.minute, $0.second] },
                       "'\(text)'", file: file, line: line)
    }

    func testTheFormsAndTheirLimits() {
        for text in ["7:30", "07:30", "23:59:59", "00:00", "0:00:00", "24:00", "23:60", "12:00:60", "7:3", "007:30", "07:300",
                     "07:30:", ":30", "07::30", "07:30:00:00", "", ":", "::", "7", "07:30 ", " 07:30", "07-30", "ab:cd",
                     "１２:００", "07:3０", "+7:30", "-7:30", "99999999999999999999:00", "07:30:5", "7:30:05"] {
            assertSame(text)
        }
        XCTAssertEqual(LocalDateTime.timeOfDay("7:05:09").map { [$0.hour, $0.minute, $0.second] }, [7, 5, 9])
        XCTAssertNil(LocalDateTime.timeOfDay("07:30 second"))
    }

    func testEveryShortStringOfDigitsColonsAndOthersReadsAsBefore() {
        let alphabet = ["0", "1", "2", "5", "9", ":", " ", "é"]
        var texts = [""]
        for _ in 1...5 {
            texts = texts.flatMap { text in alphabet.map { text + $0 } }
            for text in texts where text.filter({ $0 == ":" }).count <= 3 { assertSame(text) }
        }
    }
}
