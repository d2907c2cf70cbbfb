/// A product's rules for its bus: the roles its clients may take, the topics only the system publishes, the person's
/// input, and which role answers which request. The bus knows only names; the product hands its table to the broker at construction,
/// and its clients read the same table (Screen Time's is `BusTable.screenTime`, in the device API).
public struct BusTable: Sendable {
    /// Requests on topics starting with `prefix` go to the holder of `role`, who alone answers them.
    public struct RequestRoute: Equatable, Sendable {
        public var prefix: String
        public var role: Role

        public init(prefix: String, role: Role) {
            self.prefix = prefix
            self.role = role
        }
    }

    /// The first segments topics may start with, the product's and the bus's own (`Topic.busNamespaces`), in the
    /// order refusals list them. A topic outside them (and the configuration's declared ones) is refused as unknown.
    public let namespaces: [String]
    /// Every role a hello may name, the product's first, then the bus's own (`Role.busRoles`): the order refusals list them.
    public let roles: [Role]
    /// Roles at most one client holds: the components the system addresses by role. A role a configured plugin
    /// holds is that plugin's alone.
    public let exclusiveRoles: Set<Role>
    /// Prefixes of the topics only the system publishes (the product's events, the bus's own `Topic.busOnlyPrefixes`),
    /// in the order refusals list them. Replies to the system's requests are checked separately (by addressee).
    public let systemOnlyPrefixes: [String]
    /// The requests the system routes to a role's holder instead of answering them itself.
    public let requestRoutes: [RequestRoute]
    /// Prefixes of the person's input: topics only the person's tools (and plugins configured for the person's input)
    /// publish.
    public let personInputPrefixes: [String]
    /// The names the product's own system publishes under (besides the bus's `broker`): no client may take them, and
    /// an event from one of them is the system's.
    public let sourceNames: Set<String>
    private let systemOnlyPrefixBytes: [[UInt8]]
    private let namespaceBytes: [[UInt8]]

    /// A table of the product's namespaces, roles, events, routes and person's input; the bus's own are added where missing.
    public init(namespaces: [String], roles: [Role], exclusiveRoles: Set<Role>, systemOnlyPrefixes: [String], requestRoutes: [RequestRoute],
                personInputPrefixes: [String] = [], sourceNames: Set<String> = []) {
        let allNamespaces = namespaces + Topic.busNamespaces.filter { !namespaces.contains($0) }
        self.namespaces = allNamespaces
        namespaceBytes = allNamespaces.map { Array($0.utf8) }
        let allRoles = roles + Role.busRoles.filter { !roles.contains($0) }
        precondition(exclusiveRoles.isSubset(of: allRoles) && requestRoutes.allSatisfy { allRoles.contains($0.role) },
                     "a table's exclusive and routed roles are among its roles")
        self.roles = allRoles
        precondition(exclusiveRoles.isDisjoint(with: Role.busRoles), "the bus's own roles are anyone's")
        self.exclusiveRoles = exclusiveRoles
        let allPrefixes = systemOnlyPrefixes + Topic.busOnlyPrefixes.filter { !systemOnlyPrefixes.contains($0) }
        self.systemOnlyPrefixes = allPrefixes
        self.requestRoutes = requestRoutes
        self.personInputPrefixes = personInputPrefixes
        self.sourceNames = sourceNames
        systemOnlyPrefixBytes = allPrefixes.map { Array($0.utf8) }
    }

    /// The bus alone: its own roles and events, no product's.
    public static let bare = BusTable(namespaces: [], roles: [], exclusiveRoles: [], systemOnlyPrefixes: [], requestRoutes: [])

    /// Why `name` is not a valid client name on this bus (the bus's rule, and the product's source names), or nil.
    public func nameProblem(with name: String) -> BusProtocolError? { BusName.problem(with: name, sources: sourceNames) }

    /// Whether `source` is the system's: the bus's own or one of the product's source names.
    public func isSystemSource(_ source: String) -> Bool { BusName.reserved.contains(source) || sourceNames.contains(source) }

    /// Whether a hello may name `role`.
    public func knows(_ role: Role) -> Bool { roles.contains(role) }

    /// Whether at most one client holds `role`.
    public func isExclusive(_ role: Role) -> Bool { exclusiveRoles.contains(role) }

    /// Checks a topic's syntax and namespace (one of `namespaces`, or of `declaredNamespaces`, which plugins'
    /// configurations declare); nil when it is fine, else what is wrong.
    public func topicProblem(with topic: String, declaredNamespaces: Set<String> = []) -> BusProtocolError? {
        if let problem = Topic.syntaxProblem(with: topic) { return problem }
        if isKnownNamespace(topic) || declaredNamespaces.contains(String(Topic.namespace(of: topic))) { return nil }
        return .unknownTopic(topic, namespaces: namespaces + declaredNamespaces.sorted())
    }

    /// Whether the topic's first segment is one of the table's `namespaces` (no allocation).
    public func isKnownNamespace(_ topic: String) -> Bool {
        var topic = topic
        return topic.withUTF8 { bytes in
            let end = bytes.firstIndex(of: 0x2E) ?? bytes.count
            return namespaceBytes.contains { $0.count == end && Self.starts(bytes, with: $0) }
        }
    }

    /// Whether only the system may publish the topic (no allocation).
    public func isSystemOnly(_ topic: String) -> Bool {
        var topic = topic
        return topic.withUTF8 { bytes in
            systemOnlyPrefixBytes.contains { Self.starts(bytes, with: $0) }
        }
    }

    /// Whether `bytes` start with `prefix`, compared byte by byte: every publication is checked against each prefix,
    /// and most differ at their first byte.
    @inline(__always)
    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with prefix: [UInt8]) -> Bool {
        guard prefix.count <= bytes.count else { return false }
        for index in prefix.indices where prefix[index] != bytes[index] { return false }
        return true
    }

    /// Whether the topic is the person's input.
    public func isPersonInput(_ topic: String) -> Bool {
        personInputPrefixes.contains { topic.hasPrefix($0) }
    }

    /// Whether only the person's tools may publish `topic`, although it is the system's or the person's: the person's
    /// input, the clock's controls and a plugin's restart (`shieldbus do`, `shieldbus clock`, the Studio).
    public func isToolsOnly(_ topic: String) -> Bool {
        topic == Topic.clockControlRequest || topic == Topic.pluginRestartRequest || isPersonInput(topic)
    }

    /// The role whose holder answers requests on this topic, when the system routes them to one; nil for others.
    public func answeringRole(forRequest topic: String) -> Role? {
        requestRoutes.first { topic.hasPrefix($0.prefix) }?.role
    }

    /// Whether the system answers requests on this topic: one of its namespaces, and no role addressed.
    public func isAnsweredBySystem(_ requestTopic: String) -> Bool {
        isKnownNamespace(requestTopic) && answeringRole(forRequest: requestTopic) == nil && !requestTopic.hasPrefix(Topic.pluginNamespace + ".")
    }
}
