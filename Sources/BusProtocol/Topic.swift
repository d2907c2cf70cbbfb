/// Topics: dot-separated lowercase names, filtered by prefix.
public enum Topic {
    /// The bus's own namespaces, which every `BusTable` has: its bookkeeping, its clock, its plugins and their own topics.
    public static let busNamespaces: [String] = ["bus", "clock", "plugin", pluginNamespace]

    /// The namespace of plugins' own topics: `x.<plugin-name>.…` belongs to that plugin alone.
    public static let pluginNamespace = "x"

    /// The bus's own events (its bookkeeping, its clock, its plugins): only the system publishes them, whatever the
    /// product's `BusTable` adds.
    public static let busOnlyPrefixes: [String] = ["bus.", "clock.", "plugin."]

    /// A plugin started afresh — a running one, or one given up on — asked by the person's tools
    /// (`shieldbus plugin restart`); the broker answers on `plugin.restart.reply`.
    public static let pluginRestartRequest = "plugin.restart.request"

    /// A tool's control of the bus clock (pause, resume, speed, step, jump: protocol.md § 7.4): the one topic under
    /// `clock.` that is not the system's own — only tools may publish it, and the broker answers it.
    public static let clockControlRequest = "clock.control.request"

    /// The broker's account of a control of the bus clock: who did what, and the clock as it is now.
    public static let clockChanged = "clock.changed"

    /// A broker's last event before it leaves (its goodbyes follow).
    public static let busStopping = "bus.stopping"

    /// Topics ending with this suffix are requests: they carry `corr` and `deadline`.
    public static let requestSuffix = ".request"
    /// Topics ending with this suffix are replies: they carry the request's `corr` and reach the requester.
    public static let replySuffix = ".reply"

    /// Checks a topic's syntax only: 1 to 128 bytes, dot-separated non-empty segments of a-z, 0-9, '_' and '-'.
    /// One pass over the UTF-8 bytes; allocates only to describe a problem.
    public static func syntaxProblem(with topic: String) -> BusProtocolError? {
        var topic = topic
        return topic.withUTF8 { bytes -> BusProtocolError? in
            if bytes.isEmpty || bytes.count > 128 { return .badTopic(String(decoding: bytes, as: UTF8.self), reason: "must be 1 to 128 characters") }
            var segmentStart = 0
            for index in 0...bytes.count {
                if index == bytes.count || bytes[index] == 0x2E {
                    if index == segmentStart { return .badTopic(String(decoding: bytes, as: UTF8.self), reason: "has an empty segment (two dots, or a dot at an end)") }
                    segmentStart = index + 1
                    continue
                }
                let byte = bytes[index]
                let allowed = (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F || byte == 0x2D
                if !allowed { return .badTopic(String(decoding: bytes, as: UTF8.self), reason: "segments may contain only a-z, 0-9, '_' and '-'") }
            }
            return nil
        }
    }

    /// Why a topic in the plugins' namespace is not one, if it is not: `x.<plugin-name>.<topic>` has three segments
    /// at least (a bare `x` or `x.<name>` names nobody's topic).
    public static func pluginTopicProblem(_ topic: String) -> BusProtocolError? {
        guard topic == pluginNamespace || topic.hasPrefix(pluginNamespace + ".") else { return nil }
        guard topic.split(separator: ".", maxSplits: 2).count < 3 else { return nil }
        return .badTopic(topic, reason: "a plugin's own topics are x.<its name>.<topic>: three segments at least")
    }

    /// The plugin that owns the topic's namespace: `x.<name>.…` is plugin `name`'s; `declared` maps namespaces
    /// that configurations declare to their plugins. Nil for the system's namespaces.
    public static func owner(of topic: String, declared: [String: String]) -> String? {
        let segments = topic.split(separator: ".", maxSplits: 2)
        if segments.first == Substring(pluginNamespace) { return segments.count > 1 ? String(segments[1]) : nil }
        return segments.first.flatMap { declared[String($0)] }
    }

    /// The namespace (first segment) of a topic.
    public static func namespace(of topic: String) -> Substring {
        topic.split(separator: ".", maxSplits: 1).first ?? ""
    }

    /// Whether a subscription prefix selects the topic. The empty prefix selects everything.
    @inline(__always)
    public static func matches(_ topic: String, prefix: String) -> Bool {
        prefix.isEmpty || topic.hasPrefix(prefix)
    }

    /// The reply topic for a request topic (`x.y.request` → `x.y.reply`).
    public static func reply(to requestTopic: String) -> String {
        if let reply = asciiReply(to: requestTopic) { return reply }
        guard requestTopic.hasSuffix(requestSuffix) else { return requestTopic + replySuffix }
        return String(requestTopic.dropLast(requestSuffix.count)) + replySuffix
    }

    /// `reply(to:)` of an ASCII request topic (every valid topic), written from its bytes: asked for every request
    /// and reply sequenced. Nil for any other topic, whose suffix is judged by its characters.
    private static func asciiReply(to requestTopic: String) -> String? {
        var topic = requestTopic
        return topic.withUTF8 { bytes -> String? in
            let kept = bytes.count - requestSuffixBytes.count
            guard kept >= 0, !bytes.contains(where: { $0 >= 0x80 }),
                  requestSuffixBytes.withUnsafeBufferPointer({ $0.elementsEqual(UnsafeBufferPointer(rebasing: bytes[kept...])) }) else { return nil }
            return String(unsafeUninitializedCapacity: kept + replySuffixBytes.count) { buffer in
                _ = buffer.initialize(fromContentsOf: UnsafeBufferPointer(rebasing: bytes[..<kept]))
                _ = UnsafeMutableBufferPointer(rebasing: buffer[kept...]).initialize(fromContentsOf: replySuffixBytes)
                return kept + replySuffixBytes.count
            }
        }
    }

    private static let requestSuffixBytes = Array(requestSuffix.utf8)
    private static let replySuffixBytes = Array(replySuffix.utf8)
}
