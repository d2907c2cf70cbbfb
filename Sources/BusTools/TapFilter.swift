import BusProtocol

/// Which events a tap shows: topic patterns to show (none: everything) and to hide, and the senders to show (none:
/// every sender). A pattern is a topic prefix, or a glob whose `*` stands for any run of characters
/// (`deviceactivity.*.reply`); the broker is asked only for the literal start of each, the rest is matched here.
public struct TapFilter: Equatable {
    public var include: [String]
    public var exclude: [String]
    public var sources: Set<String>

    public init(include: [String] = [], exclude: [String] = [], sources: Set<String> = []) {
        self.include = include
        self.exclude = exclude
        self.sources = sources
    }

    /// The prefixes to subscribe to: each pattern's start before its first `*` (everything when no pattern is given).
    public var subscriptions: [String] {
        include.isEmpty ? [""] : Array(Set(include.map { String($0.prefix { $0 != "*" }) })).sorted()
    }

    public func shows(_ envelope: Envelope) -> Bool {
        guard sources.isEmpty || sources.contains(envelope.source) else { return false }
        guard include.isEmpty || include.contains(where: { Self.matches(envelope.topic, $0) }) else { return false }
        return !exclude.contains { Self.matches(envelope.topic, $0) }
    }

    /// A pattern without `*` is a prefix; with one, a glob over the whole topic.
    static func matches(_ topic: String, _ pattern: String) -> Bool {
        guard pattern.contains("*") else { return topic.hasPrefix(pattern) }
        return glob(Array(topic.utf8)[...], Array(pattern.utf8)[...])
    }

    /// Iterative glob match with backtracking to the last `*` (linear in practice, no recursion).
    private static func glob(_ text: ArraySlice<UInt8>, _ pattern: ArraySlice<UInt8>) -> Bool {
        let star = UInt8(ascii: "*")
        var t = text.startIndex, p = pattern.startIndex
        var starAt: Int?, matchedFrom = text.startIndex
        while t < text.endIndex {
            if p < pattern.endIndex, pattern[p] == star {
                starAt = p
                matchedFrom = t
                p += 1
            } else if p < pattern.endIndex, pattern[p] == text[t] {
                p += 1
                t += 1
            } else if let star = starAt {
                p = star + 1
                matchedFrom += 1
                t = matchedFrom
            } else {
                return false
            }
        }
        while p < pattern.endIndex, pattern[p] == star { p += 1 }
        return p == pattern.endIndex
    }
}
