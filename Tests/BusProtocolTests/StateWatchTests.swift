import BusProtocol
import XCTest

/// A hello's `watch`: the App-Group keys its `state.changed` subscription delivers — read, written back the same, and
/// refused, naming the field, when it is malformed or too large.
final class StateWatchTests: XCTestCase {
    private func hello(_ json: String) throws -> Hello {
        guard case .hello(let hello) = try WireCodec.decodeClientMessage([Array("hello".utf8), Array(json.utf8)][...]) else {
            throw NotAHello()
        }
        return hello
    }

    private func refusal(_ json: String) -> BusProtocolError? {
        do {
            _ = try WireCodec.decodeClientMessage([Array("hello".utf8), Array(json.utf8)][...])
            return nil
        } catch {
            return error as? BusProtocolError
        }
    }

    private func helloWatching(_ watch: String, subscribe: String = #"["state.changed"]"#) -> String {
        #"{"v":1,"name":"monitor","role":"monitor","subscribe":\#(subscribe),"watch":\#(watch)}"#
    }

    func testAWatchIsReadAndWrittenBackTheSame() throws {
        let read = try hello(helloWatching(#"{"group.a":["isCurrentlyUnlocked","habits.*"],"group.b":[]}"#))
        XCTAssertEqual(read.watch, StateWatch(["group.a": ["isCurrentlyUnlocked", "habits.*"], "group.b": []]))
        guard case .hello(let again) = try WireCodec.decodeClientMessage(WireCodec.encode(.hello(read))[...]) else { return XCTFail("not a hello") }
        XCTAssertEqual(again, read)
        XCTAssertNil(try hello(#"{"v":1,"name":"tap","role":"tap","subscribe":[""]}"#).watch, "without `watch`, every change")
        XCTAssertFalse(String(decoding: WireCodec.encode(.hello(Hello(name: "x", role: .generic, subscriptions: [])))[1], as: UTF8.self).contains("watch"),
                       "a hello without a watch says nothing of it, as clients written before it did")
    }

    func testAWatchCoversItsKeysAndPrefixesOfItsGroupsOnly() {
        let watch = StateWatch(["group.a": ["isCurrentlyUnlocked", "habits.*"], "group.b": []])
        XCTAssertTrue(watch.covers(group: "group.a", key: "isCurrentlyUnlocked"))
        XCTAssertTrue(watch.covers(group: "group.a", key: "habits.read"))
        XCTAssertFalse(watch.covers(group: "group.a", key: "isCurrentlyUnlockedAt"), "an exact key is no prefix")
        XCTAssertFalse(watch.covers(group: "group.a", key: "reports.day.2026-10-03"))
        XCTAssertFalse(watch.covers(group: "group.b", key: "isCurrentlyUnlocked"), "a group with no pattern watches nothing")
        XCTAssertFalse(watch.covers(group: "group.c", key: "isCurrentlyUnlocked"), "nor does a group it does not name")
        XCTAssertTrue(StateWatch(["group.a": ["*"]]).covers(group: "group.a", key: "anything"))
    }

    func testTheChangedKeyIsReadFromAStateChangedBody() {
        XCTAssertEqual(ChangedKey(body: Array(#"{"group":"group.a","key":"passUntil","writer":"action","version":3,"removed":false}"#.utf8)),
                       ChangedKey(group: "group.a", key: "passUntil"))
        XCTAssertNil(ChangedKey(body: Array(#"{"group":"group.a"}"#.utf8)), "no key")
        XCTAssertNil(ChangedKey(body: Array(#"{"group":"group.a","key":5}"#.utf8)), "a key that is no string")
        XCTAssertNil(ChangedKey(body: Array("not json".utf8)))
        XCTAssertFalse(StateWatch(["group.a": ["*"]]).covers(nil), "a body that names no key is no change of a watched one")
    }

    func testAMalformedWatchIsRefusedNamingTheField() {
        let mistyped: [(String, String)] = [
            (#"["isCurrentlyUnlocked"]"#, "an array"),
            (#"{"group.a":"isCurrentlyUnlocked"}"#, "group 'group.a' given string"),
            (#"{"group.a":[5]}"#, "group 'group.a' given an array holding number"),
        ]
        for (watch, got) in mistyped {
            XCTAssertEqual(refusal(helloWatching(watch)),
                           .mistypedField(kind: "hello", field: "watch", expected: "an object from App-Group name to an array of key patterns", got: got), watch)
        }
        let bad: [(String, String)] = [
            (#"{"":["key"]}"#, "a group's name is empty"),
            (#"{"group.a":[""]}"#, "'' of group 'group.a': the pattern is empty"),
            (#"{"group.a":["habits.*.read"]}"#, "'habits.*.read' of group 'group.a': '*' may only end a pattern"),
        ]
        for (watch, problem) in bad {
            XCTAssertEqual(refusal(helloWatching(watch)), .badHello("`watch`: \(problem)"), watch)
        }
        XCTAssertEqual(refusal(helloWatching(#"{"group.a":["passUntil"]}"#, subscribe: #"["deviceactivity."]"#))?.description,
                       "hello refused: `watch` narrows `state.changed`, and no `subscribe` prefix selects it: subscribe to `state.changed` too, or leave `watch` out")
        XCTAssertNil(refusal(helloWatching(#"{"group.a":["passUntil"]}"#, subscribe: #"["state."]"#)), "a prefix that selects it will do")
    }

    func testAWatchIsBoundedInPatternsAndBytes() {
        let many = (0..<HelloListSize.countLimit).map { "\"key\($0)\"" }.joined(separator: ",")
        XCTAssertEqual(refusal(helloWatching(#"{"group.a":[\#(many)]}"#))?.code, "bad-hello", "the group and 1,000 patterns are one too many")
        let long = String(repeating: "k", count: HelloListSize.bytesLimit)
        XCTAssertEqual(refusal(helloWatching(#"{"group.a":["\#(long)"]}"#)),
                       .badHello("`watch`: it names 2 groups and key patterns of \(HelloListSize.bytesLimit + 7) bytes; a hello may name at most \(HelloListSize.countLimit), of \(HelloListSize.bytesLimit) bytes in all"))
        let fewer = (1..<HelloListSize.countLimit).map { "\"key\($0)\"" }.joined(separator: ",")
        XCTAssertNil(refusal(helloWatching(#"{"group.a":[\#(fewer)]}"#)), "one group and 999 patterns are within the limit")
    }
}

private struct NotAHello: Error {}
