/// Everything that can be wrong with a message on the bus. Each case has a stable `code` (sent on the
/// wire and counted in `status`) and a message that says what was wrong and what was expected.
public enum BusProtocolError: Error, Equatable, CustomStringConvertible {
    case wrongFrameCount(kind: String?, got: Int, expected: Int)
    case notJSON(JSONSyntaxError)
    case missingField(kind: String, field: String)
    case mistypedField(kind: String, field: String, expected: String, got: String)
    case unsupportedVersion(got: Int64, supported: [Int64])
    case unknownKind(String, known: [String])
    case bodyTooLarge(bytes: Int, limit: Int)
    case badTopic(String, reason: String)
    case unknownTopic(String, namespaces: [String])
    /// A topic the publisher may not use; `systemPrefixes`: the bus's topics only the system produces (its table's).
    case reservedTopic(String, systemPrefixes: [String])
    /// A topic of the person's input (`BusTable.personInputPrefixes`) from a client that does not act for the person.
    case personInputOnly(String)
    case helloRequired(kind: String)
    case badHello(String)
    case badDelivery(String)
    case nameTaken(String)
    case duplicateCorrelation(String)
    case badName(String, reason: String)
    /// The hello carries no valid credential for what it claims (docs/protocol.md § 4.1).
    case notAdmitted(String)
    /// The credential is good, but it does not allow the role asked for.
    case roleNotAllowed(String)
    /// A topic in another plugin's namespace (`x.<plugin>.`, or one its configuration declares).
    case foreignNamespace(topic: String, owner: String)
    /// A reply from someone the request was not addressed to (or to no request at all).
    case replyRefused(topic: String, corr: String, reason: String)
    /// A tap only reads the bus.
    case readOnly(topic: String)
    /// A request from a client handling an event it only observes (`observe` in its hello), out of its turn.
    case requestWhileObserving(topic: String)
    /// The broker already holds this many publications it cannot number yet (its store cannot be written).
    case busFull(waiting: Int)
    /// A client has this many requests waiting for replies already.
    case tooManyRequests(limit: Int)
    /// A hello subscribes to more prefixes, or more bytes of them, than a session may.
    case tooManySubscriptions(count: Int, bytes: Int, countLimit: Int, bytesLimit: Int)
    /// One credential has this many sessions open already.
    case tooManySessions(limit: Int)
    /// Outside clients of one credential say hello faster than they may.
    case tooManyHellos(perSecond: Int)

    /// A stable, kebab-case identifier for the fault.
    public var code: String {
        switch self {
        case .wrongFrameCount: return "wrong-frame-count"
        case .notJSON: return "not-json"
        case .missingField: return "missing-field"
        case .mistypedField: return "mistyped-field"
        case .unsupportedVersion: return "unsupported-version"
        case .unknownKind: return "unknown-kind"
        case .bodyTooLarge: return "body-too-large"
        case .badTopic: return "bad-topic"
        case .unknownTopic: return "unknown-topic"
        case .reservedTopic, .personInputOnly: return "reserved-topic"
        case .helloRequired: return "hello-required"
        case .badHello: return "bad-hello"
        case .badDelivery: return "bad-delivery"
        case .nameTaken: return "name-taken"
        case .duplicateCorrelation: return "duplicate-corr"
        case .badName: return "bad-name"
        case .notAdmitted: return "not-admitted"
        case .roleNotAllowed: return "role-not-allowed"
        case .foreignNamespace: return "foreign-namespace"
        case .replyRefused: return "reply-refused"
        case .readOnly: return "read-only"
        case .requestWhileObserving: return "request-while-observing"
        case .busFull: return "bus-full"
        case .tooManyRequests: return "too-many-requests"
        case .tooManySubscriptions: return "too-many-subscriptions"
        case .tooManySessions: return "too-many-sessions"
        case .tooManyHellos: return "too-many-hellos"
        }
    }

    /// What went wrong, with anything a client sent (names, topics, ids) escaped: these texts reach logs and terminals.
    public var description: String { TerminalText.escaped(explanation) }

    private var explanation: String {
        switch self {
        case let .wrongFrameCount(kind, got, expected):
            let what = kind.map { "a '\($0)' message" } ?? "a message"
            return "\(what) has \(got) frame(s); expected \(expected) (kind, JSON object)"
        case let .notJSON(error):
            return "the JSON frame is \(error)"
        case let .missingField(kind, field):
            return "a '\(kind)' message needs the field '\(field)'"
        case let .mistypedField(kind, field, expected, got):
            return "field '\(field)' of a '\(kind)' message must be \(expected), not \(got)"
        case let .unsupportedVersion(got, supported):
            return "protocol version \(got) is not supported; this broker speaks version(s) \(supported.map(String.init).joined(separator: ", "))"
        case let .unknownKind(kind, known):
            return "unknown message kind '\(kind)'; known kinds: \(known.joined(separator: ", "))"
        case let .bodyTooLarge(bytes, limit):
            return "the body is \(bytes) bytes; the limit is \(limit) bytes (broker setting bus.maxBodyBytes)"
        case let .badTopic(topic, reason):
            return "topic '\(topic)' \(reason)"
        case let .unknownTopic(topic, namespaces):
            return "topic '\(topic)' is in no known namespace; topics start with one of: \(namespaces.joined(separator: ", ")) (x.<plugin-name>. is a plugin's own; a plugin's configuration may declare more in `namespaces:`)"
        case let .personInputOnly(topic):
            return "topic '\(topic)' is the person's input: only the person's tools (`shieldbus do`, the Studio: role tool with the runtime folder's tool-credential) and plugins configured with `personInput: true` may publish it"
        case let .reservedTopic(topic, systemPrefixes):
            if topic == Topic.clockControlRequest {
                return "topic '\(topic)' controls the bus clock: only tools (role tool, e.g. `shieldbus clock`) may publish it"
            }
            return "topic '\(topic)' is an event only the system produces (\(systemPrefixes.joined(separator: ", "))); plugins cannot publish it"
        case let .helloRequired(kind):
            return "a '\(kind)' message arrived before 'hello'; send hello first"
        case let .badHello(reason):
            return "hello refused: \(reason)"
        case let .badDelivery(reason):
            return "malformed delivery: \(reason)"
        case let .nameTaken(name):
            return "the name '\(name)' is in use by another connected client; choose another name, or stop the other one first"
        case let .duplicateCorrelation(corr):
            return "a request with correlation id '\(corr)' is already waiting for its reply (yours, or another client's on the same reply topic); use a fresh id per request, e.g. '<your name>-<counter>'"
        case let .badName(name, reason):
            return "the name '\(name)' \(reason)"
        case let .notAdmitted(reason):
            return "not admitted: \(reason)"
        case let .roleNotAllowed(reason):
            return "role not allowed: \(reason)"
        case let .foreignNamespace(topic, owner):
            return "topic '\(topic)' is in the namespace of plugin '\(owner)'; only it may publish there (publish under x.<your-name>., or declare a namespace of your own in the configuration's `namespaces:`)"
        case let .replyRefused(topic, corr, reason):
            return "reply '\(topic)' with corr '\(corr)' refused: \(reason)"
        case let .readOnly(topic):
            return "a tap only reads the bus; it cannot publish '\(topic)' (say hello as a tool or a plugin to publish)"
        case let .requestWhileObserving(topic):
            return "request '\(topic)' refused: it came while handling an event this client only observes (`observe` in its hello); move the topic out of `observe` to make requests in its turn"
        case let .busFull(waiting):
            return "the broker holds \(waiting) publications it cannot number yet (its delivery store cannot be written: see bus.error storage-failed); this one is refused, publish it again later"
        case let .tooManyRequests(limit):
            return "this client has \(limit) requests waiting for replies, the most one session may; wait for replies before asking more"
        case let .tooManySubscriptions(count, bytes, countLimit, bytesLimit):
            return "hello refused: \(count) subscriptions of \(bytes) bytes; a session may have at most \(countLimit), of \(bytesLimit) bytes in all (subscribe to shorter prefixes)"
        case let .tooManySessions(limit):
            return "hello refused: this credential has \(limit) sessions open already, the most it may; close some first"
        case let .tooManyHellos(perSecond):
            return "hello refused: clients of this credential say hello faster than \(perSecond) a second; connect once and keep the session"
        }
    }
}
