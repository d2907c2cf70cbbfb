/// Topics: dot-separated lowercase names, filtered by prefix.
public enum Topic {
    /// The first segments topics may start with. A topic outside them is refused as unknown.
    public static let namespaces: [String] = [
        "activity", "app", "bus", "clock", "device", "deviceactivity", "familycontrols", "input", "managedsettings",
        "notification", "plugin", "report", "scenario", "shield", "state", "web",
    ]

    /// Namespaces only the broker publishes into; a plugin publishing there is refused.
    public static let brokerOnlyNamespaces: Set<String> = ["bus", "clock", "device", "plugin", "scenario"]

    /// The namespace of the person's actions, injected by tools (`shieldbus do`); only tools may publish it.
    public static let inputNamespace = "input"

    /// Topics ending with this suffix are requests: they carry `corr` and `deadline`.
    public static let requestSuffix = ".request"
    /// Topics ending with this suffix are replies: they carry the request's `corr` and reach the requester.
    public static let replySuffix = ".reply"

    /// The namespaces as bytes, for checks that allocate nothing.
    static let namespaceBytes: [[UInt8]] = namespaces.map { Array($0.utf8) }
    static let brokerOnlyNamespaceBytes: [[UInt8]] = brokerOnlyNamespaces.map { Array($0.utf8) }

    /// Checks a topic's syntax and namespace; nil when it is fine, else what is wrong.
    /// One pass over the UTF-8 bytes; allocates only to describe a problem.
    public static func problem(with topic: String) -> BusProtocolError? {
        var topic = topic
        return topic.withUTF8 { bytes -> BusProtocolError? in
            if bytes.isEmpty || bytes.count > 128 { return .badTopic(String(decoding: bytes, as: UTF8.self), reason: "must be 1 to 128 characters") }
            var segmentStart = 0
            var namespaceEnd = -1
            for index in 0...bytes.count {
                if index == bytes.count || bytes[index] == 0x2E {
                    if index == segmentStart { return .badTopic(String(decoding: bytes, as: UTF8.self), reason: "has an empty segment (two dots, or a dot at an end)") }
                    if namespaceEnd < 0 { namespaceEnd = index }
                    segmentStart = index + 1
                    continue
                }
                let byte = bytes[index]
                let allowed = (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F || byte == 0x2D
                if !allowed { return .badTopic(String(decoding: bytes, as: UTF8.self), reason: "segments may contain only a-z, 0-9, '_' and '-'") }
            }
            let namespace = UnsafeBufferPointer(rebasing: bytes[0..<namespaceEnd])
            if !namespaceBytes.contains(where: { $0.elementsEqual(namespace) }) {
                return .unknownTopic(String(decoding: bytes, as: UTF8.self), namespaces: namespaces)
            }
            return nil
        }
    }

    /// Whether the topic lies in a namespace only the broker publishes into (no allocation).
    public static func isBrokerOnly(_ topic: String) -> Bool {
        var topic = topic
        return topic.withUTF8 { bytes in
            let end = bytes.firstIndex(of: 0x2E) ?? bytes.count
            let namespace = UnsafeBufferPointer(rebasing: bytes[0..<end])
            return brokerOnlyNamespaceBytes.contains { $0.elementsEqual(namespace) }
        }
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
        guard requestTopic.hasSuffix(requestSuffix) else { return requestTopic + replySuffix }
        return String(requestTopic.dropLast(requestSuffix.count)) + replySuffix
    }
}
