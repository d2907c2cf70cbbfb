// Tests of making the App Groups' stores beside the run's plan: in place in a day forked from a broker template.
import AppGroupStore
@testable import Configuration
import Foundation
@testable import RunPlanning
import XCTest

final class GroupStoresMakingTests: XCTestCase {
    /// A day forked from a broker template (its folder in memory by default) starts no thread for its groups' stores: they are
    /// made before `init` returns, and `finish` has nothing left to wait for.
    func testInAForkedDayTheStoresAreMadeBeforeInitReturns() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("group-stores-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let groups = ["group.com.example.first", "group.com.example.second"].map {
            ShieldBusConfiguration.AppGroupDeclaration(name: $0, slices: [:], line: 1)
        }
        let making = GroupStoresMaking(container: AppGroupContainer(rootPath: root, layout: .flat), groups: groups, onAThread: false)
        for group in groups {
            XCTAssertTrue(FileManager.default.fileExists(atPath: root + "/" + group.name + ".sqlite"), "\(group.name) made in place")
        }
        XCTAssertEqual(try making.finish(), [], "fresh stores lost nothing")
    }
}
