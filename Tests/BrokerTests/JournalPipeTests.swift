import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// A journal that is a pipe (`--journal /dev/stdout | …`, a FIFO): a pipe has no offset to ask for or cut back to,
/// and every line reaches the reader, whole, with no storage error.
final class JournalPipeTests: XCTestCase {
    func testAJournalIntoAPipeGetsEveryLine() throws {
        let work = TemporaryDirectory(prefix: "sbpipe")
        let fifo = work.file("journal.fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0, String(cString: strerror(errno)))
        // The reader, as `… | jq` would be: it opens the FIFO (waiting for the broker to open it) and reads to the end.
        let read = DispatchSemaphore(value: 0)
        let received = LockedBytes()
        Thread.detachNewThread {
            defer { read.signal() }
            guard let handle = FileHandle(forReadingAtPath: fifo) else { return }
            received.set(handle.readDataToEndOfFile())
        }
        let broker = try BrokerProcess(configuration: "name: pipe\n", arguments: ["--journal", fifo])
        let tool = try broker.connect(name: "writer", role: .tool, subscriptions: [])
        let before = try XCTUnwrap(try broker.status()["broker"]?["seq"]?.intValue)
        for n in 0..<50 { try tool.publish(Publish(topic: "app.pipe.line", body: ["n": .int(Int64(n))])) }
        waitUntil("the broker to sequence the 50 events") { (try? broker.status())?["broker"]?["seq"]?.intValue ?? 0 >= before + 50 }
        let status = try broker.status()
        XCTAssertEqual(status["counters"]?["storageErrors"]?.intValue, 0, status.jsonText)
        tool.close()
        XCTAssertEqual(broker.stop(), 0, broker.log())
        XCTAssertEqual(read.wait(timeout: .now() + 30), .success, "the reader came to the pipe's end")
        let numbers = try JournalLines.decode(received.get()).filter { $0.topic == "app.pipe.line" }.compactMap { $0.bodyValue["n"]?.intValue }
        XCTAssertEqual(numbers, Array(0..<50), "every event through the pipe, once, in order")
        XCTAssertFalse(broker.log().contains("cannot write the journal"), broker.log())
    }
}

/// Bytes handed from the reading thread to the test.
private final class LockedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.withLock { data = value } }
    func get() -> Data { lock.withLock { data } }
}
