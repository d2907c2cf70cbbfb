import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// A full disk under the journal: the broker says so (terminal, status, bus.error), keeps serving, loses no
/// event and writes them all once there is room again. The disk is a real 256 KiB tmpfs (root only).
final class DiskFullTests: XCTestCase {
    func testAFullDiskUnderTheJournalIsReportedAndRecoveredFrom() throws {
        let work = TemporaryDirectory(prefix: "sbdisk")
        let disk = work.file("disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=256k", "tmpfs", disk]
        mount.standardError = FileHandle.nullDevice
        try mount.run()
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else { throw XCTSkip("mounting a small tmpfs needs root; the full disk was not simulated") }
        defer {
            let unmount = Process()
            unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
            unmount.arguments = [disk]
            try? unmount.run()
            unmount.waitUntilExit()
        }
        // Most of the disk is taken; the journal gets what is left.
        let filler = disk + "/filler"
        XCTAssertTrue(FileManager.default.createFile(atPath: filler, contents: Data(count: 200_000)))
        let journal = disk + "/journal.jsonl"
        let broker = try BrokerProcess(configuration: "name: disk\n", arguments: ["--journal", journal])
        defer { broker.stop() }
        let tool = try broker.connect(name: "writer", role: .tool, subscriptions: [])
        let text = String(repeating: "x", count: 20_000)
        for n in 0..<6 { try tool.publish(Publish(topic: "app.disk.fill", body: ["n": .int(Int64(n)), "text": .string(text)])) }
        waitUntil("the broker to report the full disk") { (try? broker.status())?["counters"]?["storageErrors"]?.intValue == 1 }
        let status = try broker.status()
        XCTAssertTrue(status["broker"]?["lastStorageError"]?.stringValue?.contains("cannot write the journal \(journal)") == true, status.jsonText)
        XCTAssertTrue(broker.log().contains("cannot write the journal"), "said on the terminal: \(broker.log())")

        try FileManager.default.removeItem(atPath: filler)  // space returns
        try tool.publish(Publish(topic: "app.disk.fill", body: ["n": 6, "text": "after"]))
        func written() -> [Int64] {
            JournalLines.eventsSoFar(atPath: journal).filter { $0.topic == "app.disk.fill" }.compactMap { $0.bodyValue["n"]?.intValue }
        }
        waitUntil("every event to reach the journal") { written().count == 7 }
        XCTAssertEqual(written(), Array(0...6), "none lost, in order")
        XCTAssertEqual(try broker.status()["counters"]?["storageErrors"]?.intValue, 1, "reported once, not once per event")
    }
}
