/// The first frame of every message: what kind of message the JSON frame holds.
public enum MessageKind: String, CaseIterable, Sendable {
    // plugin → broker
    case hello, publish, ack, gap, status, bye
    // broker → plugin
    case welcome, event, error
    // both ways
    case heartbeat
}

/// What a connecting process is: a name. The bus itself knows three — `generic` (any plugin), `tap` (reads only) and
/// `tool` (the person's tools) — and takes the others from the product's `BusTable` (Screen Time's roles and the
/// requests each answers are the device API's). The broker treats taps and tools as passive (it never waits for their acks).
public struct Role: RawRepresentable, Hashable, Codable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }

    /// Any client with no part the system addresses.
    public static let generic: Role = "generic"
    /// A client that only reads (`shieldbus tap`, the Studio's view).
    public static let tap: Role = "tap"
    /// The person's tools (`shieldbus do`, `clock`, `status`).
    public static let tool: Role = "tool"
    /// The bus's own roles, which every table has, in the order refusals list them after a product's.
    public static let busRoles: [Role] = [.generic, .tap, .tool]

    /// Whether the broker waits for this role's acknowledgements before advancing virtual time.
    public var acknowledgesByDefault: Bool { self != .tap && self != .tool }
}

/// The size of a hello's lists of names — its subscriptions and observations, or its watch's groups and key patterns:
/// how many, and their bytes in all. The broker matches each list against every event, and a hello must stay small, so
/// each list is bounded by the same limits.
public struct HelloListSize: Equatable, Sendable {
    public private(set) var count = 0
    public private(set) var bytes = 0

    public static let countLimit = 1_000
    public static let bytesLimit = 16_384

    public init() {}

    public init(_ names: [String]...) {
        for list in names { for name in list { add(name) } }
    }

    public mutating func add(_ name: String) {
        count += 1
        bytes += name.utf8.count
    }

    public var isWithinLimits: Bool { count <= Self.countLimit && bytes <= Self.bytesLimit }
}

/// `hello`: the first message a plugin sends — who it is and which topic prefixes it wants.
public struct Hello: Equatable, Sendable {
    public var version: Int64
    public var name: String
    public var role: Role
    public var subscriptions: [String]
    /// Informational only: a pid proves nothing about who is speaking.
    public var pid: Int64?
    public var acknowledges: Bool
    /// What admits the client: a supervised plugin's per-launch credential, or the runtime directory's cookie.
    public var credential: String?
    /// Topic prefixes among the subscriptions that the client only observes (`observe`): in virtual time they
    /// are handed to it without a turn of its own, and it makes no request while handling them.
    public var observations: [String]
    /// Whether the client reads several events in one message (`events`, `batches` in the hello). A client
    /// written before batches existed does not say so, and gets every event in a message of its own.
    public var readsBatches: Bool
    /// The App-Group keys whose changes its `state.changed` subscription delivers (`watch` in the hello); nil: every
    /// change.
    public var watch: StateWatch?
    /// Said again by a client that heard nothing from the broker for a while but kept its session's state (`resume` in
    /// the hello): if the broker still holds that session on this connection, it goes on — same deliveries, turns and
    /// requests — and the welcome says `resumed`; a broker that does not hold it opens a new one as for any hello.
    public var resume: Bool

    public init(name: String, role: Role, subscriptions: [String], pid: Int64? = nil,
                acknowledges: Bool? = nil, version: Int64 = ProtocolVersion.current, credential: String? = nil,
                observations: [String] = [], readsBatches: Bool = false, watch: StateWatch? = nil, resume: Bool = false) {
        self.version = version
        self.name = name
        self.role = role
        self.subscriptions = subscriptions
        self.pid = pid
        self.acknowledges = acknowledges ?? role.acknowledgesByDefault
        self.credential = credential
        self.observations = observations
        self.readsBatches = readsBatches
        self.watch = watch
        self.resume = resume
    }

    /// The hello as the session it opens sees it: a resume asks for the same session, so it is the same hello.
    public var opening: Hello {
        var hello = self
        hello.resume = false
        return hello
    }
}

/// `publish`: an event a plugin puts on the bus; the broker stamps it with a sequence number and bus time.
public struct Publish: Equatable, Sendable {
    public var topic: String
    /// The body: one JSON object, compact.
    public var body: [UInt8]
    /// Correlation id: set on requests (topics ending `.request`) and copied onto their replies.
    public var corr: String?
    /// Bus time by which a request wants its reply.
    public var deadline: BusTime?
    /// The event whose handling published this one, and which of its publications it is: a plugin that sends
    /// them again after a crash (protocol.md § 9.1) has the copies the broker already sequenced dropped.
    public var cause: PublicationCause?

    public init(topic: String, body: [UInt8], corr: String? = nil, deadline: BusTime? = nil, cause: PublicationCause? = nil) {
        self.topic = topic
        self.body = body
        self.corr = corr
        self.deadline = deadline
        self.cause = cause
    }

    public init(topic: String, body: JSONValue, corr: String? = nil, deadline: BusTime? = nil, cause: PublicationCause? = nil) {
        self.init(topic: topic, body: body.jsonBytes, corr: corr, deadline: deadline, cause: cause)
    }
}

/// A publication's place among the consequences of one handled event: the event's sequence number and the
/// publication's index (0, 1, …) among those its handling made.
public struct PublicationCause: Hashable, Sendable {
    public var seq: UInt64
    public var index: Int

    public init(seq: UInt64, index: Int) {
        self.seq = seq
        self.index = index
    }
}

/// An event as the broker delivers it: the envelope, identical for every receiver and in the journal.
public struct Envelope: Equatable, Sendable {
    public var seq: UInt64
    public var time: BusTime
    public var topic: String
    public var source: String
    public var corr: String?
    public var deadline: BusTime?
    /// The body, compact JSON bytes (always an object).
    public var body: [UInt8]

    public init(seq: UInt64, time: BusTime, topic: String, source: String,
                corr: String? = nil, deadline: BusTime? = nil, body: [UInt8]) {
        self.seq = seq
        self.time = time
        self.topic = topic
        self.source = source
        self.corr = corr
        self.deadline = deadline
        self.body = body
    }

    /// The body decoded as a JSON value.
    public var bodyValue: JSONValue { (try? JSONValue(parsing: body)) ?? .object([:]) }

    /// Whether this event answers a request.
    public var isReply: Bool { corr != nil && topic.hasSuffix(Topic.replySuffix) }

    /// Who sent the event, as the broker stamped it (a client never declares it): a session's admitted name,
    /// or `broker`, `scenario`, `system` for the system itself.
    public var sender: String { source }

    /// Whether the system (the broker and its device OS, or the scenario) sent the event: no client may use
    /// those names, so this is what a plugin checks before acting on an event only the system produces.
    public func isFromSystem(of table: BusTable) -> Bool { table.isSystemSource(source) }
}

/// Errors as sent on the wire (kind `error`) and carried by `bus.error` events.
public struct ErrorReport: Equatable, Sendable {
    public var code: String
    public var message: String
    /// The versions the broker speaks, on `unsupported-version`.
    public var supported: [Int64]?

    public init(code: String, message: String, supported: [Int64]? = nil) {
        self.code = code
        self.message = message
        self.supported = supported
    }

    public init(_ error: BusProtocolError) {
        var supported: [Int64]?
        if case .unsupportedVersion(_, let versions) = error { supported = versions }
        self.init(code: error.code, message: error.description, supported: supported)
    }
}

/// `welcome`: the broker's answer to a good hello.
public struct Welcome: Equatable, Sendable {
    /// The session's name on the bus (the hello's name).
    public var name: String
    /// Bus time now.
    public var time: BusTime
    /// The last sequence number issued.
    public var seq: UInt64
    /// `real`, `scaled` or `virtual`.
    public var clock: String
    /// How often the plugin should send heartbeats, in milliseconds of wall time.
    public var heartbeatMilliseconds: Int64
    /// The broker's configuration facts a plugin may need (time zone, profile, …).
    public var settings: JSONValue
    /// The first sequence number this broker run issued: 1 on a fresh state folder; past the numbers the last broker
    /// set aside when it numbers on from it. Nil from a broker that does not say.
    public var firstSeq: UInt64?
    /// The hello asked to resume its session and the broker still held it: it goes on, its delivery numbers too.
    public var resumed: Bool

    public init(name: String, time: BusTime, seq: UInt64, clock: String, heartbeatMilliseconds: Int64, settings: JSONValue = [:],
                firstSeq: UInt64? = nil, resumed: Bool = false) {
        self.name = name
        self.time = time
        self.seq = seq
        self.clock = clock
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.settings = settings
        self.firstSeq = firstSeq
        self.resumed = resumed
    }
}

/// A message from a plugin (or tool) to the broker.
public enum ClientMessage: Equatable, Sendable {
    case hello(Hello)
    case publish(Publish)
    /// Every event delivered to the sender with a sequence number up to and including this one is handled.
    case ack(seq: UInt64)
    /// The sender saw its delivery counter jump: deliveries `from...to` never arrived.
    case gap(from: UInt64, to: UInt64)
    case heartbeat
    /// Asks for the broker's status report; without a valid credential the report leaves out pids, paths and errors.
    case status(credential: String?)
    /// The sender is leaving.
    case bye

    public var kind: MessageKind {
        switch self {
        case .hello: return .hello
        case .publish: return .publish
        case .ack: return .ack
        case .gap: return .gap
        case .heartbeat: return .heartbeat
        case .status: return .status
        case .bye: return .bye
        }
    }
}

/// A message from the broker to a plugin (or tool).
public enum BrokerMessage: Equatable, Sendable {
    case welcome(Welcome)
    /// An event, with this receiver's own delivery number (1, 2, 3, … with no gaps unless deliveries were lost).
    case event(Envelope, delivery: UInt64)
    case error(ErrorReport)
    case heartbeat(time: BusTime)
    case status(JSONValue)
    case bye(reason: String)

    public var kind: MessageKind {
        switch self {
        case .welcome: return .welcome
        case .event: return .event
        case .error: return .error
        case .heartbeat: return .heartbeat
        case .status: return .status
        case .bye: return .bye
        }
    }
}

/// `events`: several events in one message, for a client that said `batches` in its hello — in sequence order,
/// delivered with the numbers `firstDelivery`, `firstDelivery + 1`, … (docs/protocol.md § 4.3).
public struct EventBatch: Equatable, Sendable {
    public var firstDelivery: UInt64
    public var envelopes: [Envelope]

    public init(firstDelivery: UInt64, envelopes: [Envelope]) {
        (self.firstDelivery, self.envelopes) = (firstDelivery, envelopes)
    }

    /// Each event with its delivery number.
    public var deliveries: [(envelope: Envelope, delivery: UInt64)] {
        envelopes.enumerated().map { ($0.element, firstDelivery + UInt64($0.offset)) }
    }
}
