import BusProtocol
import XCTest

/// A body read lately is not read again; one pushed out by newer ones is; a reading that throws is not kept.
final class RecentlyReadTests: XCTestCase {
    func testTheSameBytesAreReadOnceWhileKept() {
        var recent = RecentlyRead<Int>(limit: 2)
        var reads = 0
        func read(_ bytes: [UInt8]) -> Int {
            reads += 1
            return bytes.count
        }
        XCTAssertEqual(recent.value(of: [1, 2, 3], reading: read), 3)
        XCTAssertEqual(recent.value(of: [1, 2, 3], reading: read), 3)
        XCTAssertEqual(recent.value(of: [4], reading: read), 1)
        XCTAssertEqual(recent.value(of: [1, 2, 3], reading: read), 3)
        XCTAssertEqual(reads, 2)
        // A third body pushes out the one used least lately ([4]); [1, 2, 3] stays.
        XCTAssertEqual(recent.value(of: [5, 6], reading: read), 2)
        XCTAssertEqual(recent.value(of: [1, 2, 3], reading: read), 3)
        XCTAssertEqual(reads, 3)
        XCTAssertEqual(recent.value(of: [4], reading: read), 1)
        XCTAssertEqual(reads, 4)
    }

    func testAReadingThatThrowsIsReadAgain() {
        struct Unreadable: Error {}
        var recent = RecentlyRead<Int>(limit: 4)
        var reads = 0
        for _ in 0..<2 {
            XCTAssertThrowsError(try recent.value(of: [9]) { _ in
                reads += 1
                throw Unreadable()
            })
        }
        XCTAssertEqual(reads, 2)
    }
}
