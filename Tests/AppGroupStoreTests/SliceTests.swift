// Tests of slices: who may write which keys of an app group.
import AppGroupStore
import Foundation
import XCTest

final class SliceTests: ContainerTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try container.declareSlices(group: group, [
            "monitor": ["shield.*", "quotaEndTimestamp"],
            "delegate": ["passUntil", "grace.*"],
        ])
    }

    private func defaults(_ writer: String) throws -> SharedDefaults {
        try SharedDefaults(suiteName: group, container: container, writer: writer)
    }

    func testWriterWritesExactAndPrefixKeysOfItsSlice() throws {
        let monitor = try defaults("monitor")
        try monitor.set(1_700_000_600, forKey: "quotaEndTimestamp")
        try monitor.set(["app-1"], forKey: "shield.applications")
        try monitor.removeObject(forKey: "shield.applications")
        try defaults("delegate").set(3, forKey: "grace.usesToday")
        XCTAssertEqual(try monitor.integer(forKey: "grace.usesToday"), 3, "everyone reads every key")
        XCTAssertEqual(try container.slices(group: group),
                       ["delegate": ["grace.*", "passUntil"], "monitor": ["quotaEndTimestamp", "shield.*"]])
    }

    func testWriteOutsideSliceNamesBothSlices() throws {
        let delegate = try defaults("delegate")
        assertStoreError(try delegate.set(true, forKey: "shield.webDomains")) { error in
            guard case .outsideSlice(let key, let writer, let slice, let owner) = error else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(key, "shield.webDomains")
            XCTAssertEqual(writer, "delegate")
            XCTAssertEqual(slice, ["grace.*", "passUntil"])
            XCTAssertEqual(owner, SliceClaim(writer: "monitor", pattern: "shield.*"))
            XCTAssertTrue("\(error)".contains("it belongs to slice 'shield.*' of writer 'monitor'"), "\(error)")
        }
        assertStoreError(try delegate.removeObject(forKey: "quotaEndTimestamp")) { error in
            guard case .outsideSlice(_, _, _, SliceClaim(writer: "monitor", pattern: "quotaEndTimestamp")?) = error else {
                return XCTFail("unexpected \(error)")
            }
        }
        assertStoreError(try delegate.compareAndSet("nobodys", expectedVersion: nil, newValue: 1)) { error in
            guard case .outsideSlice(_, _, _, nil) = error else { return XCTFail("unexpected \(error)") }
            XCTAssertTrue("\(error)".contains("no writer's slice holds it"), "\(error)")
        }
        // "grace.*" must not match a key that only shares the letters "grace".
        assertStoreError(try delegate.set(1, forKey: "graceful")) { error in
            guard case .outsideSlice = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertEqual(try delegate.dictionaryRepresentation(), [:])
    }

    func testDeniedWriteInsideTransactionRollsBackTheRest() throws {
        let monitor = try defaults("monitor")
        assertStoreError(try monitor.transaction { tx in
            try tx.set(1, forKey: "shield.applications")
            try tx.set(2, forKey: "passUntil")
        }) { error in
            guard case .outsideSlice(key: "passUntil", writer: "monitor", _, _) = error else {
                return XCTFail("unexpected \(error)")
            }
        }
        XCTAssertNil(try monitor.entry(forKey: "shield.applications"))
    }

    func testWriterWithoutSliceIsToldToDeclareOne() throws {
        assertStoreError(try defaults("notifier").set("route", forKey: "pendingRoute")) { error in
            guard case .noSlice(writer: "notifier", group: group) = error else { return XCTFail("unexpected \(error)") }
            XCTAssertTrue("\(error)".contains("declare its slice"), "\(error)")
        }
    }

    func testAdministratorWritesEveryKey() throws {
        let admin = try defaults(SharedDefaults.administrator)
        try admin.set(1, forKey: "shield.applications")
        try admin.set(2, forKey: "passUntil")
        try admin.set(3, forKey: "unclaimed")
        XCTAssertEqual(try admin.entry(forKey: "passUntil")?.writer, "shieldbus")
    }

    func testRedeclaringSlicesReplacesThem() throws {
        try container.declareSlices(group: group, ["notifier": ["pendingRoute"]])
        try defaults("notifier").set("/unlock", forKey: "pendingRoute")
        assertStoreError(try defaults("monitor").set(1, forKey: "quotaEndTimestamp")) { error in
            guard case .noSlice(writer: "monitor", _) = error else { return XCTFail("unexpected \(error)") }
        }
    }

    func testInvalidDeclarationsAreRefusedAndKeepTheOldSlices() throws {
        let invalid: [[String: [String]]] = [
            ["monitor": [""]],
            ["monitor": ["shield.*.x"]],
            ["": ["a"]],
            ["some writer": ["a"]],
            [SharedDefaults.administrator: ["a"]],
        ]
        for slices in invalid {
            assertStoreError(try container.declareSlices(group: group, slices)) { error in
                guard case .invalidSlice = error else { return XCTFail("unexpected \(error) for \(slices)") }
            }
        }
        let overlapping: [[String: [String]]] = [
            ["a": ["k"], "b": ["k"]],
            ["a": ["shield.*"], "b": ["shield.apps"]],
            ["a": ["shield.*"], "b": ["sh*"]],
            ["a": ["*"], "b": ["x"]],
        ]
        for slices in overlapping {
            assertStoreError(try container.declareSlices(group: group, slices)) { error in
                guard case .overlappingSlices = error else { return XCTFail("unexpected \(error) for \(slices)") }
            }
        }
        // One writer may hold overlapping patterns of its own.
        XCTAssertNoThrow(try container.declareSlices(group: "group.com.example.focus", ["a": ["x*", "xy"], "b": ["y"]]))
        try container.declareSlices(group: group, ["monitor": ["quotaEndTimestamp"]])
        try defaults("monitor").set(5, forKey: "quotaEndTimestamp")
    }

    /// A group created with its slices has them from its first open, as a group created and then given them; slices
    /// that cannot be declared are refused before the group's store is made.
    func testAGroupCreatedWithItsSlicesHasThemAndBadSlicesMakeNoStore() throws {
        let made = "group.com.example.made"
        try container.createGroup(made, slices: ["monitor": ["shield.*"], "delegate": ["passUntil"]])
        XCTAssertEqual(try container.slices(group: made), ["delegate": ["passUntil"], "monitor": ["shield.*"]])
        try SharedDefaults(suiteName: made, container: container, writer: "monitor").set(1, forKey: "shield.count")
        // Created again (the broker's next start) with other slices: they replace the first, the keys are kept.
        try container.createGroup(made, slices: ["monitor": ["shield.*", "quota"]])
        XCTAssertEqual(try container.slices(group: made), ["monitor": ["quota", "shield.*"]])
        XCTAssertEqual(try SharedDefaults(suiteName: made, container: container, writer: nil).integer(forKey: "shield.count"), 1)

        let refused = "group.com.example.refused"
        assertStoreError(try container.createGroup(refused, slices: ["a": ["k"], "b": ["k"]])) { error in
            guard case .overlappingSlices = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: try container.storeURL(forGroup: refused).path))
        XCTAssertFalse(try container.groups().contains(refused))
    }
}
