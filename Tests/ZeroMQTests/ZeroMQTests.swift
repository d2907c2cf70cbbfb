import Foundation
import XCTest
@testable import ZeroMQ

final class ZeroMQTests: XCTestCase {
    func endpoint(_ name: String) -> String { "inproc://\(name)-\(UUID().uuidString)" }

    func testMultipartRoundTripOverPair() throws {
        let context = try Context()
        let a = try Socket(context, .pair), b = try Socket(context, .pair)
        let address = endpoint("pair")
        try a.bind(address)
        try b.connect(address)
        try a.send([Array("one".utf8), [], [0, 1, 2, 255]])
        let frames = try XCTUnwrap(try b.receive())
        XCTAssertEqual(frames, [Array("one".utf8), [], [0, 1, 2, 255]])
    }

    func testNonBlockingReceiveReturnsNilWhenEmpty() throws {
        let context = try Context()
        let socket = try Socket(context, .pair)
        try socket.bind(endpoint("empty"))
        XCTAssertNil(try socket.receive(dontWait: true))
    }

    func testReceiveTimeoutReturnsNil() throws {
        let context = try Context()
        let socket = try Socket(context, .pull)
        try socket.bind(endpoint("timeout"))
        try socket.setReceiveTimeout(milliseconds: 10)
        XCTAssertNil(try socket.receive())
    }

    func testRouterSeesDealerIdentityAndCanReply() throws {
        let context = try Context()
        let router = try Socket(context, .router), dealer = try Socket(context, .dealer)
        let address = endpoint("router")
        try router.bind(address)
        try dealer.setRoutingID(Array("plugin-7".utf8))
        try dealer.connect(address)
        try dealer.send([Array("hello".utf8)])
        let frames = try XCTUnwrap(try router.receive())
        XCTAssertEqual(frames, [Array("plugin-7".utf8), Array("hello".utf8)])
        try router.send([frames[0], Array("welcome".utf8)])
        XCTAssertEqual(try dealer.receive(), [Array("welcome".utf8)])
    }

    func testRouterMandatoryReportsUnknownPeer() throws {
        let context = try Context()
        let router = try Socket(context, .router)
        try router.setRouterMandatory(true)
        try router.bind(endpoint("mandatory"))
        XCTAssertThrowsError(try router.send([Array("nobody".utf8), [1]], dontWait: true)) { error in
            XCTAssertTrue((error as? ZMQError)?.isHostUnreachable == true, "\(error)")
        }
    }

    func testDontWaitSendReturnsFalseAtHighWaterMark() throws {
        let context = try Context()
        let push = try Socket(context, .push)
        try push.setSendHighWaterMark(2)
        let pull = try Socket(context, .pull)
        try pull.setReceiveHighWaterMark(2)
        let address = endpoint("hwm")
        try pull.bind(address)
        try push.connect(address)
        var accepted = 0
        for _ in 0..<1000 where try push.send([[1]], dontWait: true) { accepted += 1 }
        XCTAssertLessThan(accepted, 1000, "sending without a reader must hit the high-water mark")
        XCTAssertGreaterThan(accepted, 0)
    }

    func testPubSubFiltersByPrefix() throws {
        let context = try Context()
        let publisher = try Socket(context, .pub), subscriber = try Socket(context, .sub)
        let address = endpoint("pubsub")
        try publisher.bind(address)
        try subscriber.subscribe("shield.")
        try subscriber.connect(address)
        // A subscription reaches the publisher asynchronously: publish until the first message arrives.
        var received: [[UInt8]]?
        let deadline = Date().addingTimeInterval(5)
        while received == nil && Date() < deadline {
            try publisher.send([Array("activity.x".utf8)])
            try publisher.send([Array("shield.shown".utf8)])
            received = try subscriber.receive(dontWait: true)
        }
        XCTAssertEqual(received, [Array("shield.shown".utf8)])
    }

    func testPollerReportsReadableSocketAndFileDescriptor() throws {
        let context = try Context()
        let a = try Socket(context, .pair), b = try Socket(context, .pair)
        let address = endpoint("poll")
        try a.bind(address)
        try b.connect(address)
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        var poller = Poller()
        try poller.addReadable(b)
        poller.addReadable(fileDescriptor: fds[0])
        XCTAssertEqual(try poller.poll(timeoutMilliseconds: 0), [false, false])
        try a.send([[42]])
        var byte: UInt8 = 1
        XCTAssertEqual(write(fds[1], &byte, 1), 1)
        XCTAssertEqual(try poller.poll(timeoutMilliseconds: 5000), [true, true])
    }

    /// One socket's wait (`Socket.waitReadable`, a plugin's wait for its broker) says whether a message waits.
    func testASocketsWaitSaysWhetherAMessageWaits() throws {
        let context = try Context()
        let a = try Socket(context, .pair), b = try Socket(context, .pair)
        let address = endpoint("wait")
        try a.bind(address)
        try b.connect(address)
        XCTAssertEqual(try b.waitReadable(timeoutMilliseconds: 0).ready, false)
        try a.send([[42]])
        let waited = try b.waitReadable(timeoutMilliseconds: 5000)
        XCTAssertTrue(waited.ready)
        XCTAssertFalse(waited.interrupted)
        XCTAssertEqual(try b.receive(dontWait: true), [[42]])
        XCTAssertEqual(try b.waitReadable(timeoutMilliseconds: 0).ready, false)
    }

    /// A signal ends a wait at once and says so: a plugin waiting for the broker sees its stop request then, not at the
    /// wait's end (`make run`'s day took 0.25 s longer half the time: a plugin waited out its 250 ms poll after SIGTERM).
    func testASignalEndsAPollEarlyAndSaysSo() throws {
        let context = try Context()
        let socket = try Socket(context, .pair)
        try socket.bind(endpoint("signal"))
        var poller = Poller()
        try poller.addReadable(socket)
        let ready = try whileSignalled { try poller.poll(timeoutMilliseconds: 60_000) }
        XCTAssertEqual(ready, [false])
        XCTAssertTrue(poller.wasInterrupted, "the poll ended without a signal (its 60 s timeout?)")
        XCTAssertEqual(try poller.poll(timeoutMilliseconds: 0), [false])
        XCTAssertFalse(poller.wasInterrupted)
    }

    /// The same for one socket's wait.
    func testASignalEndsASocketsWaitEarlyAndSaysSo() throws {
        let context = try Context()
        let socket = try Socket(context, .pair)
        try socket.bind(endpoint("signal-one"))
        let waited = try whileSignalled { try socket.waitReadable(timeoutMilliseconds: 60_000) }
        XCTAssertFalse(waited.ready)
        XCTAssertTrue(waited.interrupted, "the wait ended without a signal (its 60 s timeout?)")
        let again = try socket.waitReadable(timeoutMilliseconds: 0)
        XCTAssertFalse(again.ready)
        XCTAssertFalse(again.interrupted)
    }

    /// Runs `wait` on this thread while another sends it SIGUSR1 until the wait has ended (a signal sent before it
    /// began is simply handled: no timing assumed), with a handler without SA_RESTART, as the SDK installs with
    /// signal(): poll(2) then fails with EINTR.
    private func whileSignalled<Result>(_ wait: () throws -> Result) throws -> Result {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        var previous = sigaction()
        XCTAssertEqual(sigaction(SIGUSR1, &action, &previous), 0)
        defer { sigaction(SIGUSR1, &previous, nil) }
        let waiter = pthread_self()
        let waiting = WaitFlag()
        let signallerEnded = DispatchSemaphore(value: 0)
        let signaller = Thread {
            while waiting.isSet { pthread_kill(waiter, SIGUSR1); sched_yield() }
            signallerEnded.signal()
        }
        signaller.start()
        defer {
            waiting.clear()
            // Its last signal must be handled before the default action (ending the process) is put back.
            signallerEnded.wait()
        }
        return try wait()
    }

    func testErrorsCarryErrnoAndLibzmqMessage() throws {
        let context = try Context()
        let socket = try Socket(context, .router)
        XCTAssertThrowsError(try socket.bind("nonsense://x")) { error in
            let zmqError = error as! ZMQError
            XCTAssertEqual(zmqError.errno, EPROTONOSUPPORT)
            XCTAssertFalse(zmqError.message.isEmpty)
            XCTAssertTrue(zmqError.description.contains("bind(nonsense://x)"), zmqError.description)
        }
    }

    func testClosedSocketThrowsInsteadOfCrashing() throws {
        let context = try Context()
        let socket = try Socket(context, .pair)
        socket.close()
        socket.close()
        XCTAssertThrowsError(try socket.send([[1]])) { error in
            XCTAssertEqual((error as? ZMQError)?.errno, ENOTSOCK)
        }
    }

    func testNoFileDescriptorsLeakAcrossManyContexts() throws {
        func openDescriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }
        let directory = NSTemporaryDirectory() + "zmq-leak-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let before = openDescriptors()
        for n in 0..<30 {
            let context = try Context()
            let server = try Socket(context, .router), client = try Socket(context, .dealer)
            let address = "ipc://\(directory)/s\(n)"
            try server.bind(address)
            try client.connect(address)
            try client.send([[1, 2, 3]])
            _ = try server.receive()
            server.close()
            client.close()
        }
        XCTAssertLessThanOrEqual(openDescriptors(), before + 2, "closing sockets and contexts must release their descriptors")
    }

    func testVersionIsFour() {
        XCTAssertTrue(libzmqVersion.hasPrefix("4."), libzmqVersion)
    }
}

/// A flag one thread clears and another reads.
private final class WaitFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = true
    var isSet: Bool { lock.withLock { value } }
    func clear() { lock.withLock { value = false } }
}
