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
    case reservedTopic(String)
    case helloRequired(kind: String)
    case badHello(String)
    case badDelivery(String)
    case nameTaken(String)
    case duplicateCorrelation(String)

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
        case .reservedTopic: return "reserved-topic"
        case .helloRequired: return "hello-required"
        case .badHello: return "bad-hello"
        case .badDelivery: return "bad-delivery"
        case .nameTaken: return "name-taken"
        case .duplicateCorrelation: return "duplicate-corr"
        }
    }

    public var description: String {
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
            return "topic '\(topic)' is in no known namespace; topics start with one of: \(namespaces.joined(separator: ", "))"
        case let .reservedTopic(topic):
            if topic.hasPrefix(Topic.inputNamespace + ".") {
                return "topic '\(topic)' is the person's input: only tools (role tool, e.g. `shieldbus do`) may publish it"
            }
            return "topic '\(topic)' is reserved for the broker (\(Topic.brokerOnlyNamespaces.sorted().map { $0 + "." }.joined(separator: ", "))); plugins cannot publish it"
        case let .helloRequired(kind):
            return "a '\(kind)' message arrived before 'hello'; send hello first"
        case let .badHello(reason):
            return "hello refused: \(reason)"
        case let .badDelivery(reason):
            return "malformed delivery: \(reason)"
        case let .nameTaken(name):
            return "the name '\(name)' is in use by another connected client; choose another name, or stop the other one first"
        case let .duplicateCorrelation(corr):
            return "a request with correlation id '\(corr)' is already waiting for its reply; use a fresh id per request"
        }
    }
}
