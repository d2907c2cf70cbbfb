import DeviceAPI
import Foundation

/// The last reply each call topic got, kept with the bytes it was read from (`PluginRuntime.call`): the OS answers
/// most calls the same way again and again — the renderer's re-block check asks for the kept selection's events and
/// the shield settings at every shield request — and a reply in the very bytes of the last one is read as that one
/// was, so it is given again without parsing its JSON and building its sets and dictionaries anew. Reading is a
/// function of the bytes alone: the caller gets what a fresh reading gives (a value: a reply read as an instance of a
/// class, which its first caller could change, is read afresh; the check looks at the reply's own type only, so a
/// struct holding a class instance would be shared — the OS's replies are values through and through). At most `topicLimit` topics, each reply
/// of at most `byteLimit` bytes, are kept; used by the plugin's thread alone.
struct LastReplies {
    static let topicLimit = 16
    static let byteLimit = 64 * 1024
    private var kept: [String: (body: [UInt8], reply: Any)] = [:]

    /// The reply to a call on `topic` in `body`: the last one read when `body` is its bytes, else `read(body)`.
    mutating func reply<Value>(to topic: String, body: [UInt8], reading read: ([UInt8]) throws -> DeviceReply<Value>) rethrows -> DeviceReply<Value> {
        // An instance of a class, given twice, could be changed by the first caller under the second: read afresh.
        if Value.self is AnyObject.Type { return try read(body) }
        if let last = kept[topic], Self.same(last.body, body), let reply = last.reply as? DeviceReply<Value> { return reply }
        let reply = try read(body)
        if body.count <= Self.byteLimit, kept[topic] != nil || kept.count < Self.topicLimit { kept[topic] = (body, reply) }
        return reply
    }

    private static func same(_ kept: [UInt8], _ body: [UInt8]) -> Bool {
        guard kept.count == body.count else { return false }
        guard !body.isEmpty else { return true }
        return kept.withUnsafeBytes { kept in body.withUnsafeBytes { memcmp(kept.baseAddress!, $0.baseAddress!, $0.count) == 0 } }
    }
}
