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

    /// Checks a topic's syntax and namespace; nil when it is fine, else what is wrong.
    public static func problem(with topic: String) -> BusProtocolError? {
        if topic.isEmpty || topic.utf8.count > 128 { return .badTopic(topic, reason: "must be 1 to 128 characters") }
        let segments = topic.split(separator: ".", omittingEmptySubsequences: false)
        for segment in segments {
            if segment.isEmpty { return .badTopic(topic, reason: "has an empty segment (two dots, or a dot at an end)") }
            let allowed = segment.utf8.allSatisfy { byte in
                (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F || byte == 0x2D
            }
            if !allowed { return .badTopic(topic, reason: "segments may contain only a-z, 0-9, '_' and '-'") }
        }
        let namespace = String(segments[0])
        if !namespaces.contains(namespace) { return .unknownTopic(topic, namespaces: namespaces) }
        return nil
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
