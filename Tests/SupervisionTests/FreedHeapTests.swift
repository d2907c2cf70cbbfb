import CProcessControl
import Foundation
import XCTest

/// `shieldbus_keep_freed_heap`, the report builder's heap thresholds: a block below the map threshold comes from the
/// heap (so, freed, it stays there for the next use) instead of a map of its own.
///
/// The block is 24 MiB: glibc's own map threshold starts at 128 KiB and rises only with the size of a mapped block
/// once freed, so without the call a block that size is mapped (no earlier test frees one).
final class FreedHeapTests: XCTestCase {
    func testABlockBelowTheThresholdComesFromTheHeap() throws {
        XCTAssertEqual(shieldbus_keep_freed_heap(32 << 20), 1)
        // Back to glibc's default sizes (fixed from now on in this test process) once done.
        defer { XCTAssertEqual(shieldbus_keep_freed_heap(128 << 10), 1) }
        let block = try XCTUnwrap(malloc(24 << 20))
        defer { free(block) }
        XCTAssertTrue(try Self.heap().contains(UInt(bitPattern: block)), "24 MiB under a 32 MiB threshold is heap")
    }

    /// The main arena's `[heap]` range from /proc/self/maps (XCTest runs tests on the main thread, whose arena it is).
    private static func heap() throws -> Range<UInt> {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        let line = try XCTUnwrap(maps.split(separator: "\n").first { $0.hasSuffix("[heap]") }, "no [heap] in /proc/self/maps")
        let bounds = try XCTUnwrap(line.split(separator: " ").first).split(separator: "-").compactMap { UInt($0, radix: 16) }
        XCTAssertEqual(bounds.count, 2, String(line))
        return bounds[0]..<bounds[1]
    }
}
