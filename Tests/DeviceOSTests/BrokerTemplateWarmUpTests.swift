import AppGroupStore
import Broker
import DeviceOS
import Foundation
import SQLite
import ShieldBusTestSupport
import XCTest

/// What the broker template makes once before it forks days (`BrokerWarmUp`, `DeviceOSWarmUp`, docs/architecture.md
/// § 8): the runtime's first uses of the serving loop's types and of the device OS's bodies.
final class BrokerTemplateWarmUpTests: XCTestCase {
    /// Every body comes back as it went: a body its reader refused would stop the reading before the coding containers
    /// the warm-up is there to make.
    func testEveryBodyTheDeviceOSCodesComesBackAsItWent() throws {
        XCTAssertEqual(DeviceOSWarmUp.run(), [])
        XCTAssertEqual(DeviceOSWarmUp.run(catalog: try FocusDevice.catalog()), [])
    }

    /// The stores the template builds once for its days (`rememberStores`) leave nothing in the folder they were built
    /// in, and a device store made afterwards, from their bytes, opens as a fresh device's.
    func testRememberingTheStoresLeavesNothingBehindAndAFreshDeviceStillOpens() throws {
        let folder = try Self.rememberEveryStore()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), [])
        let catalog = try FocusDevice.catalog()
        _ = try DeviceOS(settings: FocusDevice.settings(catalog: catalog, companionPlugin: "app"), catalog: catalog,
                         statePath: folder + "/device.sqlite")
        XCTAssertEqual(try SQLiteConnection(path: folder + "/device.sqlite", flags: [.readWrite]).quickCheck(), [])
    }

    /// The template forks every day after its warm-up: the warm-up leaves no descriptor open (no store, socket or file
    /// of its own) for a day to inherit. Only descriptors it opened count. Not its doing: one the test process closed
    /// meanwhile; a timer descriptor of libdispatch's, made at another thread's first timer on a clock (the test
    /// library's, under `--xunit-output`) while the warm-up, which uses no dispatch, runs — libdispatch's own event
    /// descriptors are made before the first listing, so that an event or poll descriptor the warm-up made (a libzmq
    /// context's) still counts; and one another thread holds for a moment, so the count is polled until a deadline:
    /// a descriptor the warm-up left stays open past it.
    func testTheWarmUpsLeaveNoDescriptorOpen() throws {
        let fired = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now()) { fired.signal() }
        DispatchQueue.global().asyncAfter(wallDeadline: .now()) { fired.signal() }
        fired.wait()
        fired.wait()
        let before = try openDescriptors()
        BrokerWarmUp.run()
        DeviceOSWarmUp.run(catalog: try FocusDevice.catalog())
        let folder = try Self.rememberEveryStore()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let deadline = Date() + 5
        func opened() throws -> Set<Int32> { try openDescriptors().subtracting(before).filter { !Self.dispatchOwns(target(of: $0)) } }
        var left = try opened()
        while !left.isEmpty, Date() < deadline {
            usleep(10_000)  // between two listings of a poll with a deadline
            left = try opened()
        }
        XCTAssertEqual(left, [], "left open: \(left.sorted().map { "\($0) → \(target(of: $0))" })")
    }

    /// libdispatch's timer descriptors (one per clock, made at its first timer on it); neither libzmq nor SQLite uses one.
    private static func dispatchOwns(_ target: String) -> Bool { target == "anon_inode:[timerfd]" }

    /// What a descriptor is open on, as /proc names it (a path, `pipe:[…]`, `anon_inode:[eventfd]`).
    private func target(of descriptor: Int32) -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")) ?? "closed since"
    }

    /// The process's open descriptors, without the listing's own.
    private func openDescriptors() throws -> Set<Int32> {
        guard let folder = opendir("/proc/self/fd") else { throw CocoaError(.fileReadUnknown) }
        defer { closedir(folder) }
        let own = dirfd(folder)
        var found: Set<Int32> = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let descriptor = Int32(name), descriptor != own { found.insert(descriptor) }
        }
        return found
    }

    /// The stores the template builds once for its days, built in a fresh folder of their own (returned).
    private static func rememberEveryStore() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("remember-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try BrokerWarmUp.rememberStores(in: folder)
        try DeviceOSWarmUp.rememberStores(in: folder)
        try AppGroupContainer.rememberStoreCreation(in: folder)
        return folder
    }
}
