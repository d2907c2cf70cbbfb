// Authority: who may publish what — taps, system topics, the person's input, namespaces, and replies (architecture.md § 8.1).

import BusProtocol

/// The rules a publication must pass before it is sequenced. Who may connect as whom is `Admission`'s.
struct Authority {
    /// Namespaces declared in the configuration → the plugin or client that alone publishes there.
    private let declaredNamespaces: [String: String]
    private let declaredNamespaceNames: Set<String>
    private let table: BusTable

    init(plugins: [PluginSpec], clients: [ClientGrant], table: BusTable) {
        self.table = table
        declaredNamespaces = Self.declaredNamespaces(plugins: plugins, clients: clients)
        declaredNamespaceNames = Set(declaredNamespaces.keys)
    }

    /// The namespaces the configuration declares → the plugin or named client that owns each.
    static func declaredNamespaces(plugins: [PluginSpec], clients: [ClientGrant]) -> [String: String] {
        var declared: [String: String] = [:]
        for plugin in plugins { for namespace in plugin.namespaces { declared[namespace] = plugin.name } }
        for grant in clients { if let name = grant.name { for namespace in grant.namespaces { declared[namespace] = name } } }
        return declared
    }

    /// Why `session` may not publish `publish`, if it may not: taps only read; events only the system produces,
    /// the person's input, the clock's controls and a plugin's restart (the person's tools, and plugins configured
    /// for the person's input, only), unknown namespaces, other plugins' namespaces, and replies from anyone
    /// but the request's addressee are refused.
    func problem(with publish: Publish, from session: Session, requests: OpenRequests) -> BusProtocolError? {
        let topic = publish.topic
        if session.role == .tap { return .readOnly(topic: topic) }
        if table.isToolsOnly(topic) {
            // The person's tools (the tool credential); the person's input also from a plugin configured for it.
            if !session.actsForPerson || (session.isSupervised && !table.isPersonInput(topic)) { return reserved(topic) }
        } else if table.isSystemOnly(topic) {
            return reserved(topic)
        }
        if topic.hasPrefix(Topic.pluginNamespace), let problem = Topic.pluginTopicProblem(topic) { return problem }
        if !table.isKnownNamespace(topic), let problem = table.topicProblem(with: topic, declaredNamespaces: declaredNamespaceNames) { return problem }
        // Only topics that can have an owner are split (the hot path allocates nothing for the others). A request
        // with a corr is addressed to the namespace's owner, who alone answers it: anyone may ask.
        if topic.hasPrefix(Topic.pluginNamespace + ".") || !declaredNamespaces.isEmpty,
           let owner = Topic.owner(of: topic, declared: declaredNamespaces), owner != session.name,
           !(publish.corr != nil && topic.hasSuffix(Topic.requestSuffix)) {
            return .foreignNamespace(topic: topic, owner: owner)
        }
        if let corr = publish.corr, topic.hasSuffix(Topic.replySuffix) {
            guard let pending = requests.waiting(corr: corr, replyTopic: topic) else {
                return .replyRefused(topic: topic, corr: corr, reason: "it answers no pending request")
            }
            switch pending.answerer {
            case .session(let name) where name == session.name: break
            case .session(let name): return .replyRefused(topic: topic, corr: corr, reason: "the request went to '\(name)', not to '\(session.name)'")
            case .nobody(let role): return .replyRefused(topic: topic, corr: corr, reason: "the request went to the holder of the role '\(role.rawValue)', and '\(session.name)' is not it")
            case .system: return .replyRefused(topic: topic, corr: corr, reason: "the OS answers this request; nobody else may")
            }
        }
        return nil
    }

    private func reserved(_ topic: String) -> BusProtocolError {
        table.isPersonInput(topic) ? .personInputOnly(topic) : .reservedTopic(topic, systemPrefixes: table.systemOnlyPrefixes)
    }
}
