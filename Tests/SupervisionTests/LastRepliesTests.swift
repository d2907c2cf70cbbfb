// Tests of the replies a plugin keeps for its calls, given again when the OS answers in the same bytes.
import BusProtocol
import DeviceAPI
import Foundation
@testable import ShieldBusSDK
import XCTest

final class LastRepliesTests: XCTestCase {
    private struct ReadFailure: Error {}

    /// A reply in the bytes of the last one on its topic is given again without reading; other bytes, another topic or
    /// another type of value are read, and a reading that fails is kept from nothing and said.
    func testAReplyInTheLastOnesBytesIsGivenAgainAndAnyOtherIsRead() throws {
        var replies = LastReplies()
        var reads = 0
        func read(_ body: [UInt8]) throws -> DeviceReply<MonitoredActivities> {
            reads += 1
            guard let json = try? JSONValue(parsing: body), let reply = DeviceReply<MonitoredActivities>(body: json) else { throw ReadFailure() }
            return reply
        }
        let first = Array(#"{"ok":true,"value":{"activities":["a","b"]}}"#.utf8)
        let second = Array(#"{"ok":true,"value":{"activities":["a","c"]}}"#.utf8)
        let topic = "deviceactivity.activities.request"
        let read1 = try replies.reply(to: topic, body: first, reading: read)
        XCTAssertEqual(try read1.get().activities.map(\.rawValue), ["a", "b"])
        XCTAssertEqual(try replies.reply(to: topic, body: first, reading: read), read1)
        XCTAssertEqual(reads, 1, "the same bytes again: not read")
        XCTAssertEqual(try replies.reply(to: topic, body: second, reading: read).get().activities.map(\.rawValue), ["a", "c"])
        XCTAssertEqual(reads, 2, "other bytes are read")
        XCTAssertEqual(try replies.reply(to: topic, body: first, reading: read).get().activities.map(\.rawValue), ["a", "b"])
        XCTAssertEqual(reads, 3, "only the last reply is kept")
        _ = try replies.reply(to: "other.request", body: first, reading: read)
        XCTAssertEqual(reads, 4, "another topic keeps its own")
        let empty = try replies.reply(to: topic, body: first) { _ in DeviceReply<NoValue>.success(NoValue()) }
        XCTAssertTrue(empty.ok, "another type of value is read, not cast")
        XCTAssertThrowsError(try replies.reply(to: topic, body: Array("{".utf8), reading: read)) { XCTAssertTrue($0 is ReadFailure) }
        XCTAssertThrowsError(try replies.reply(to: topic, body: Array("{".utf8), reading: read), "a failed reading is not kept")
        XCTAssertEqual(reads, 6)
    }

    /// What is kept is bounded: replies past `byteLimit` are read every time, and past `topicLimit` topics a new
    /// topic's reply is not kept.
    func testKeptRepliesAreBounded() throws {
        var replies = LastReplies()
        var reads = 0
        func read(_ body: [UInt8]) throws -> DeviceReply<NoValue> {
            reads += 1
            return .success(NoValue())
        }
        let large = [UInt8](repeating: UInt8(ascii: " "), count: LastReplies.byteLimit + 1)
        for _ in 0..<2 { _ = try replies.reply(to: "large.request", body: large, reading: read) }
        XCTAssertEqual(reads, 2, "a reply past the byte limit is never kept")
        reads = 0
        for topic in 0..<LastReplies.topicLimit { _ = try replies.reply(to: "t\(topic).request", body: [1], reading: read) }
        _ = try replies.reply(to: "t0.request", body: [1], reading: read)
        XCTAssertEqual(reads, LastReplies.topicLimit, "kept up to the topic limit")
        for _ in 0..<2 { _ = try replies.reply(to: "one-too-many.request", body: [1], reading: read) }
        XCTAssertEqual(reads, LastReplies.topicLimit + 2, "a topic past the limit is not kept")
    }
}
