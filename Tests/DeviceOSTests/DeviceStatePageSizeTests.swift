@testable import DeviceOS
import Foundation
import ShieldBusTestSupport
import SQLite
import XCTest

/// `device.sqlite` made by the device has its own page size; one made earlier with SQLite's default keeps it, and
/// what either holds — values larger than a page among them — is read back as written, also after a reopen.
final class DeviceStatePageSizeTests: XCTestCase {
    func testANewStoreTakesItsPageSizeAndAnOlderOneKeepsItsOwn() throws {
        let work = TemporaryDirectory(prefix: "sbdevicepage")
        func pageSize(_ path: String) throws -> Int64? {
            try SQLiteConnection(path: path).withStatement("PRAGMA page_size") { try $0.step() ? try $0.int64(at: 0) : nil }
        }
        let new = work.file("device.sqlite"), older = work.file("older.sqlite")
        try SQLiteConnection(path: older).execute("CREATE TABLE made_earlier (n INTEGER)")
        let large = String(repeating: "registration ", count: 900)  // several pages of either size
        for path in [new, older] {
            let store = try DeviceStateStore(path: path)
            try store.save(large, key: "deviceactivity.registrations")
            try store.save(7, key: "tokens.epoch")
            try store.appendUsage(json: Array(#"{"end":2,"start":1,"use":{}}"#.utf8), endMilliseconds: 2, horizonMilliseconds: 0)
        }
        XCTAssertEqual(try pageSize(new), Int64(DeviceStateStore.pageSize))
        XCTAssertEqual(try pageSize(older), 4_096, "a store made earlier keeps its size")
        for path in [new, older] {
            let reopened = try DeviceStateStore(path: path)
            XCTAssertEqual(try reopened.load(String.self, key: "deviceactivity.registrations"), large, path)
            XCTAssertEqual(try reopened.load(Int.self, key: "tokens.epoch"), 7, path)
            XCTAssertEqual(try reopened.usageSpans(UsageMeter.Span.self).map { [$0.start, $0.end] },
                           [[Date(timeIntervalSince1970: 0.001), Date(timeIntervalSince1970: 0.002)]], path)
        }
    }
}
