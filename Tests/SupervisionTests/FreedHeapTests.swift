import CProcessControl
import Foundation
import XCTest

/// `shieldbus_keep_freed_heap`, the report builder's heap thresholds: a block below the threshold comes from the heap
/// (so, freed, it stays there for the next event), a block above it gets a map of its own (mapped and unmapped per use).
final class FreedHeapTests: XCTestCase {
    func testABlockBelowTheThresholdComesFromTheHeapAndOneAboveItIsMapped() throws {
        let block = 600 << 10
        XCTAssertEqual(shieldbus_keep_freed_heap(1 << 20), 1)
        let fromHeap = try XCTUnwrap(malloc(block))
        defer { free(fromHeap) }
        XCTAssertTrue(try Self.heap().contains(UInt(bitPattern: fromHeap)), "600 KiB under a 1 MiB threshold is heap")

        // glibc's default size (fixed from now on in this test process): the same block is mapped on its own.
        XCTAssertEqual(shieldbus_keep_freed_heap(128 << 10), 1)
        let mapped = try XCTUnwrap(malloc(block))
        defer { free(mapped) }
        XCTAssertFalse(try Self.heap().contains(UInt(bitPattern: mapped)), "600 KiB over 128 KiB is a map of its own")
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
