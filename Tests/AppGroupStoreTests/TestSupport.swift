// Shared set-up for the app-group store tests: a temporary container and a fixed clock.
import AppGroupStore
import Foundation
import XCTest

/// A test case with a fresh container in a temporary folder.
class ContainerTestCase: XCTestCase {
    var root: URL!
    var container: AppGroupContainer!
    let group = "group.com.example.focus"
    /// Bus time for writes: fixed, exactly representable in Unix seconds.
    let busTime = Date(timeIntervalSince1970: 1_700_000_000.25)

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("appgroup-tests-\(UUID().uuidString)")
        container = AppGroupContainer(root: root)
        try container.createGroup(group)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: root)
    }

    /// The store file of group `name`, its folder made: for tests that put a file there themselves.
    func storeFileURL(_ name: String) throws -> URL {
        let url = try container.storeURL(forGroup: name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        return url
    }

    /// Defaults of the test group writing as the administrator, stamped with `busTime`.

    func adminDefaults() throws -> SharedDefaults {
        try adminDefaultsOpener()()
    }

    /// Opens the same defaults without the test case, which is not Sendable: for threads of their own.
    func adminDefaultsOpener() -> @Sendable () throws -> SharedDefaults {
        let (group, container, busTime) = (group, container!, busTime)
        return {
            try SharedDefaults(suiteName: group, container: container, writer: SharedDefaults.administrator,
                               clock: { busTime })
        }
    }

    /// Asserts that `body` throws an `AppGroupStoreError` and hands it over.
    func assertStoreError<T>(_ body: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line,
                             _ check: (AppGroupStoreError) -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard let storeError = error as? AppGroupStoreError else {
                return XCTFail("expected an AppGroupStoreError, got \(error)", file: file, line: line)
            }
            check(storeError)
        }
    }
}
