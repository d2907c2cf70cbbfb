/// Turns messages into frames and frames into messages, validating everything on the way in.
///
/// A message is two frames: the kind (ASCII) and one JSON object. An event's first frame also carries the
/// receiver's delivery number (`event 17`), so that the second — the envelope — is the same bytes for every
/// receiver. See docs/protocol.md.
public enum WireCodec {
    // MARK: Client → broker

    /// Encodes a plugin's message.
    public static func encode(_ message: ClientMessage) -> [[UInt8]] {
        var object: [String: JSONValue] = ["v": .int(ProtocolVersion.current)]
        switch message {
        case .hello(let hello):
            object["v"] = .int(hello.version)
            object["name"] = .string(hello.name)
            object["role"] = .string(hello.role.rawValue)
            object["subscribe"] = .array(hello.subscriptions.map(JSONValue.string))
            object["acks"] = .bool(hello.acknowledges)
            if let pid = hello.pid { object["pid"] = .int(pid) }
            if let credential = hello.credential { object["credential"] = .string(credential) }
            if !hello.observations.isEmpty { object["observe"] = .array(hello.observations.map(JSONValue.string)) }
            if hello.readsBatches { object["batches"] = .bool(true) }
            if let watch = hello.watch { object["watch"] = watch.jsonValue }
            if hello.resume { object["resume"] = .bool(true) }
        case .status(let credential):
            if let credential { object["credential"] = .string(credential) }
        case .publish(let publish):
            return [kindFrame(.publish), encodePublish(publish)]
        case .ack(let seq):
            object["seq"] = .int(Int64(seq))
        case .gap(let from, let to):
            object["from"] = .int(Int64(from))
            object["to"] = .int(Int64(to))
        case .heartbeat, .bye:
            break
        }
        return [kindFrame(message.kind), JSONValue.object(object).jsonBytes]
    }

    static func encodePublish(_ publish: Publish) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(publish.body.count + publish.topic.utf8.count + 48)
        out.append(contentsOf: #"{"v":1,"topic":"#.utf8)
        JSONWriter.writeString(publish.topic, into: &out)
        if let corr = publish.corr {
            out.append(contentsOf: #","corr":"#.utf8)
            JSONWriter.writeString(corr, into: &out)
        }
        if let deadline = publish.deadline {
            out.append(contentsOf: #","deadline":"#.utf8)
            JSONWriter.writeInteger(deadline, into: &out)
        }
        if let cause = publish.cause {
            out.append(contentsOf: #","cause":"#.utf8)
            JSONWriter.writeInteger(cause.seq, into: &out)
            out.append(contentsOf: #","index":"#.utf8)
            JSONWriter.writeInteger(Int64(cause.index), into: &out)
        }
        out.append(contentsOf: #","body":"#.utf8)
        out.append(contentsOf: publish.body)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Decodes and validates a plugin's message (the frames after any ROUTER identity). `roles`: the roles a hello may
    /// name (the broker's table's, in the order a refusal lists them); nil takes any.
    public static func decodeClientMessage(_ frames: ArraySlice<[UInt8]>, maximumBodyBytes: Int = defaultMaximumBodyBytes,
                                           roles: [Role]? = nil) throws -> ClientMessage {
        // The broker's most frequent messages, as the SDK writes them, in one pass; anything else in full.
        if frames.count == 2 {
            let (kind, json) = (frames[frames.startIndex], frames[frames.startIndex + 1])
            if kind == publishKind {
                var reader = ClientMessageReader(json)
                if let publish = reader.publish(maximumBodyBytes: maximumBodyBytes) { return .publish(publish) }
            } else if kind == ackKind {
                var reader = ClientMessageReader(json)
                if let seq = reader.ack() { return .ack(seq: seq) }
            }
        }
        return try decodeClientMessageInFull(frames, maximumBodyBytes: maximumBodyBytes, roles: roles)
    }

    private static let publishKind = kindFrame(.publish)
    private static let ackKind = kindFrame(.ack)

    /// Decodes and validates a plugin's message in any member order and form, naming what is wrong.
    static func decodeClientMessageInFull(_ frames: ArraySlice<[UInt8]>, maximumBodyBytes: Int = defaultMaximumBodyBytes,
                                          roles: [Role]? = nil) throws -> ClientMessage {
        let kindName = frames.first.map { String(decoding: $0, as: UTF8.self) }
        guard frames.count == 2 else {
            throw BusProtocolError.wrongFrameCount(kind: kindName.flatMap { MessageKind(rawValue: $0) }?.rawValue, got: frames.count, expected: 2)
        }
        guard let kind = MessageKind(rawValue: kindName!), clientKinds.contains(kind) else {
            throw BusProtocolError.unknownKind(printable(kindName!), known: clientKinds.map(\.rawValue))
        }
        let fields = try Fields(frames[frames.startIndex + 1], kind: kind.rawValue)
        try fields.checkVersion()
        switch kind {
        case .hello:
            let role = Role(rawValue: try fields.string("role"))
            if let roles, !roles.contains(role) {
                throw BusProtocolError.badHello("unknown role '\(role)'; roles: \(roles.map(\.rawValue).joined(separator: ", "))")
            }
            let name = try fields.string("name")
            if let problem = BusName.problem(with: name) { throw problem }
            let subscriptions = try fields.optionalStringArray("subscribe") ?? []
            let watch = try fields.optionalStateWatch("watch")
            if watch != nil, !subscriptions.contains(where: { Topic.matches(StateWatch.topic, prefix: $0) }) {
                throw BusProtocolError.badHello("`watch` narrows `\(StateWatch.topic)`, and no `subscribe` prefix selects it: subscribe to `\(StateWatch.topic)` too, or leave `watch` out")
            }
            return .hello(Hello(name: name, role: role, subscriptions: subscriptions,
                                pid: try fields.optionalInt("pid"), acknowledges: try fields.optionalBool("acks"),
                                version: try fields.int("v"), credential: try fields.optionalString("credential"),
                                observations: try fields.optionalStringArray("observe") ?? [],
                                readsBatches: try fields.optionalBool("batches") ?? false, watch: watch,
                                resume: try fields.optionalBool("resume") ?? false))
        case .publish:
            let topic = try fields.string("topic")
            if let problem = Topic.syntaxProblem(with: topic) { throw problem }  // namespaces: the broker, which knows the declared ones
            guard let bodyKind = fields.view.kind(of: "body") else { throw BusProtocolError.missingField(kind: "publish", field: "body") }
            guard bodyKind == .object else {
                throw BusProtocolError.mistypedField(kind: "publish", field: "body", expected: "an object", got: name(of: bodyKind))
            }
            let body = fields.view.compactBytes(of: "body")!
            guard body.count <= maximumBodyBytes else { throw BusProtocolError.bodyTooLarge(bytes: body.count, limit: maximumBodyBytes) }
            var cause: PublicationCause?
            if fields.view.kind(of: "cause") != nil {
                let index = fields.view.kind(of: "index") == nil ? 0 : try fields.nonNegativeInt("index")
                cause = PublicationCause(seq: UInt64(try fields.nonNegativeInt("cause")), index: Int(index))
            }
            return .publish(Publish(topic: topic, body: Array(body), corr: try fields.optionalString("corr"),
                                    deadline: try fields.optionalInt("deadline"), cause: cause))
        case .ack:
            return .ack(seq: UInt64(try fields.nonNegativeInt("seq")))
        case .gap:
            let from = try fields.nonNegativeInt("from"), to = try fields.nonNegativeInt("to")
            guard to >= from else {
                throw BusProtocolError.mistypedField(kind: "gap", field: "to", expected: "a number not below 'from' (\(from))", got: "\(to)")
            }
            return .gap(from: UInt64(from), to: UInt64(to))
        case .heartbeat: return .heartbeat
        case .status: return .status(credential: try fields.optionalString("credential"))
        case .bye: return .bye
        default: fatalError("unreachable: client kinds are checked above")
        }
    }

    static let clientKinds: [MessageKind] = [.hello, .publish, .ack, .gap, .heartbeat, .status, .bye]

    // MARK: Broker → client

    static let brokerKinds: [MessageKind] = [.welcome, .event, .error, .heartbeat, .status, .bye]
    /// How an event's first frame starts: the kind and one space; the delivery number follows.
    public static let eventHeadPrefix = Array("event ".utf8)

    /// Encodes a broker message. For events prefer `eventFrames(envelopeJSON:delivery:)` with a pre-encoded envelope.
    public static func encode(_ message: BrokerMessage) -> [[UInt8]] {
        var object: [String: JSONValue] = ["v": .int(ProtocolVersion.current)]
        switch message {
        case .welcome(let welcome):
            object["name"] = .string(welcome.name)
            object["time"] = .int(welcome.time)
            object["seq"] = .int(Int64(welcome.seq))
            object["clock"] = .string(welcome.clock)
            object["heartbeat"] = .int(welcome.heartbeatMilliseconds)
            object["settings"] = welcome.settings
            if let firstSeq = welcome.firstSeq { object["firstSeq"] = .int(Int64(firstSeq)) }
            if welcome.resumed { object["resumed"] = .bool(true) }
        case .event(let envelope, let delivery):
            return eventFrames(envelopeJSON: encodeEnvelope(envelope), delivery: delivery)
        case .error(let report):
            object["code"] = .string(report.code)
            object["message"] = .string(report.message)
            if let supported = report.supported { object["supported"] = .array(supported.map(JSONValue.int)) }
        case .heartbeat(let time):
            object["time"] = .int(time)
        case .status(let report):
            object["report"] = report
        case .bye(let reason):
            object["reason"] = .string(reason)
        }
        return [kindFrame(message.kind), JSONValue.object(object).jsonBytes]
    }

    /// The frames of one event delivery.
    public static func eventFrames(envelopeJSON: [UInt8], delivery: UInt64) -> [[UInt8]] {
        [withEventHead(delivery: delivery) { Array($0) }, envelopeJSON]
    }

    /// Calls `body` with an event's first frame for `delivery` (`event 17`), written on the stack.
    @inline(__always)
    public static func withEventHead<Result>(delivery: UInt64, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withHead(eventHeadPrefix, number: delivery, body)
    }

    /// Calls `body` with a batch's first frame for deliveries from `firstDelivery` on (`events 17`), written on the stack.
    @inline(__always)
    public static func withEventsHead<Result>(firstDelivery: UInt64, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withHead(eventsHeadPrefix, number: firstDelivery, body)
    }

    /// `prefix` (at most 12 bytes) then `number` in decimal, on the stack.
    @inline(__always)
    private static func withHead<Result>(_ prefix: [UInt8], number: UInt64, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        // The prefix and at most 20 digits.
        var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        return try withUnsafeMutableBytes(of: &storage) { buffer in
            var start = JSONWriter.writeDigits(of: number, endingAt: buffer.count, in: buffer)
            start -= prefix.count
            for (offset, byte) in prefix.enumerated() { buffer[start + offset] = byte }
            return try body(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// How a batch's first frame starts: the kind and one space; the first delivery number follows.
    public static let eventsHeadPrefix = Array("events ".utf8)
    /// What separates a batch's envelopes: the broker's compact JSON never holds a raw newline (as in the journal).
    public static let batchSeparator = UInt8(ascii: "\n")

    /// The frames of a batch for a client that reads them: `events <first delivery>`, then the envelopes, one per
    /// line, delivered with the numbers `firstDelivery`, `firstDelivery + 1`, … in that order.
    public static func eventBatchFrames(envelopeJSONs: [[UInt8]], firstDelivery: UInt64) -> [[UInt8]] {
        [withEventsHead(firstDelivery: firstDelivery) { Array($0) }, Array(envelopeJSONs.joined(separator: [batchSeparator]))]
    }

    /// Decodes an `events` message, or returns nil when the frames are another kind (`decodeBrokerMessage`'s).
    public static func decodeEventBatch(_ frames: [[UInt8]]) throws -> EventBatch? {
        guard let first = frames.first, let firstDelivery = try deliveryNumber(first, prefix: eventsHeadPrefix) else { return nil }
        guard frames.count == 2 else { throw BusProtocolError.wrongFrameCount(kind: "events", got: frames.count, expected: 2) }
        // Each line read in place (a string cannot run on into the next line: a raw newline in it is an error).
        let lines = frames[1]
        var envelopes: [Envelope] = []
        var start = 0
        while true {
            let end = lines[start...].firstIndex(of: batchSeparator) ?? lines.count
            envelopes.append(try decodeEnvelope(in: lines, range: start..<end))
            guard end < lines.count else { break }
            start = end + 1
        }
        guard !firstDelivery.addingReportingOverflow(UInt64(envelopes.count - 1)).overflow else {
            throw BusProtocolError.badDelivery("a batch of \(envelopes.count) events from delivery \(firstDelivery) runs past 64 bits")
        }
        return EventBatch(firstDelivery: firstDelivery, envelopes: envelopes)
    }

    /// The envelope as compact JSON with a fixed field order — the form in which it is delivered and journaled.
    public static func encodeEnvelope(_ envelope: Envelope) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(envelope.body.count + 96)
        out.append(contentsOf: #"{"v":1,"seq":"#.utf8)
        JSONWriter.writeInteger(envelope.seq, into: &out)
        out.append(contentsOf: #","time":"#.utf8)
        JSONWriter.writeInteger(envelope.time, into: &out)
        out.append(contentsOf: #","topic":"#.utf8)
        JSONWriter.writeString(envelope.topic, into: &out)
        out.append(contentsOf: #","source":"#.utf8)
        JSONWriter.writeString(envelope.source, into: &out)
        if let corr = envelope.corr {
            out.append(contentsOf: #","corr":"#.utf8)
            JSONWriter.writeString(corr, into: &out)
        }
        if let deadline = envelope.deadline {
            out.append(contentsOf: #","deadline":"#.utf8)
            JSONWriter.writeInteger(deadline, into: &out)
        }
        out.append(contentsOf: #","body":"#.utf8)
        out.append(contentsOf: envelope.body)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Decodes an envelope (a journal line or the second frame of an event).
    /// The envelope in `bytes[range]` (a line of a batch or a journal): read in place when it is in the broker's own
    /// compact form, otherwise decoded in full (which names what is wrong).
    static func decodeEnvelope(in bytes: [UInt8], range: Range<Int>) throws -> Envelope {
        var reader = EnvelopeReader(bytes, in: range)
        return try reader.read() ?? decodeEnvelope(Array(bytes[range]))
    }

    public static func decodeEnvelope(_ bytes: [UInt8]) throws -> Envelope {
        let fields = try Fields(bytes, kind: "event")
        try fields.checkVersion()
        guard fields.view.kind(of: "body") == .object else {
            throw BusProtocolError.mistypedField(kind: "event", field: "body", expected: "an object",
                                                 got: fields.view.kind(of: "body").map(name(of:)) ?? "nothing")
        }
        return Envelope(seq: UInt64(try fields.nonNegativeInt("seq")), time: try fields.int("time"),
                        topic: try fields.string("topic"), source: try fields.string("source"),
                        corr: try fields.optionalString("corr"), deadline: try fields.optionalInt("deadline"),
                        body: Array(fields.view.compactBytes(of: "body")!))
    }

    /// Decodes and validates a broker message. An event's body is checked when it is read (`EnvelopeReader`).
    public static func decodeBrokerMessage(_ frames: [[UInt8]]) throws -> BrokerMessage {
        guard let first = frames.first else { throw BusProtocolError.wrongFrameCount(kind: nil, got: 0, expected: 2) }
        if let delivery = try eventDelivery(first) {
            guard frames.count == 2 else { throw BusProtocolError.wrongFrameCount(kind: MessageKind.event.rawValue, got: frames.count, expected: 2) }
            var reader = EnvelopeReader(frames[1])
            return .event(try reader.read() ?? decodeEnvelope(frames[1]), delivery: delivery)
        }
        let kindName = String(decoding: first, as: UTF8.self)
        guard let kind = MessageKind(rawValue: kindName), brokerKinds.contains(kind) else {
            throw BusProtocolError.unknownKind(printable(kindName), known: brokerKinds.map(\.rawValue))
        }
        guard frames.count == 2 else { throw BusProtocolError.wrongFrameCount(kind: kindName, got: frames.count, expected: 2) }
        let fields = try Fields(frames[1], kind: kindName)
        try fields.checkVersion()
        switch kind {
        case .welcome:
            return .welcome(Welcome(name: try fields.string("name"), time: try fields.int("time"),
                                    seq: UInt64(try fields.nonNegativeInt("seq")), clock: try fields.string("clock"),
                                    heartbeatMilliseconds: try fields.int("heartbeat"),
                                    settings: fields.view.value(of: "settings") ?? [:],
                                    firstSeq: try fields.optionalInt("firstSeq").map { UInt64(clamping: $0) },
                                    resumed: try fields.optionalBool("resumed") ?? false))
        case .error:
            let supported = fields.view.value(of: "supported")?.arrayValue?.compactMap(\.intValue)
            return .error(ErrorReport(code: try fields.string("code"), message: try fields.string("message"), supported: supported))
        case .heartbeat:
            return .heartbeat(time: try fields.int("time"))
        case .status:
            return .status(fields.view.value(of: "report") ?? .null)
        case .bye:
            return .bye(reason: try fields.optionalString("reason") ?? "")
        default: fatalError("unreachable: broker kinds are checked above")
        }
    }

    /// The delivery number of an event's first frame (`event 17`), or nil when the frame names another kind.
    static func eventDelivery(_ head: [UInt8]) throws -> UInt64? {
        try deliveryNumber(head, prefix: eventHeadPrefix)
    }

    /// The number after `prefix` (a kind and a space: `event `, `events `), or nil when the frame names another kind.
    private static func deliveryNumber(_ head: [UInt8], prefix: [UInt8]) throws -> UInt64? {
        let kind = prefix.dropLast()
        let name = String(decoding: kind, as: UTF8.self)
        guard head.starts(with: kind) else { return nil }
        if head.count == kind.count { throw BusProtocolError.badDelivery("an \(name) message's first frame is '\(name)', a space and the delivery number") }
        guard head.starts(with: prefix) else { return nil }  // another kind that starts with the same letters
        guard head.count > prefix.count else { throw BusProtocolError.badDelivery("an \(name) message's first frame has no delivery number after '\(name) '") }
        var value: UInt64 = 0
        for byte in head[prefix.count...] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                throw BusProtocolError.badDelivery("the delivery number after '\(name) ' is not a decimal number")
            }
            let (times10, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { throw BusProtocolError.badDelivery("the delivery number does not fit 64 bits") }
            value = next
        }
        return value
    }

    // MARK: Helpers

    static func kindFrame(_ kind: MessageKind) -> [UInt8] { Array(kind.rawValue.utf8) }

    static func printable(_ text: String) -> String {
        let shown = text.unicodeScalars.prefix(32).map { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F ? String($0) : "?" }.joined()
        return text.unicodeScalars.count > 32 ? shown + "…" : shown
    }

    static func name(of kind: JSONKind) -> String {
        switch kind {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// Typed access to a message's JSON fields with errors that name the field.
struct Fields {
    let view: JSONObjectView
    let kind: String

    init(_ bytes: [UInt8], kind: String) throws {
        do {
            view = try JSONObjectView(bytes)
        } catch let error as JSONSyntaxError {
            throw BusProtocolError.notJSON(error)
        }
        self.kind = kind
    }

    func checkVersion() throws {
        let version = try int("v")
        guard ProtocolVersion.supported.contains(version) else {
            throw BusProtocolError.unsupportedVersion(got: version, supported: ProtocolVersion.supported)
        }
    }

    private func value(_ field: String, expected: String, kindOK: JSONKind) throws -> JSONValue? {
        guard let found = view.kind(of: field) else { return nil }
        guard found == kindOK, let value = view.value(of: field) else {
            throw BusProtocolError.mistypedField(kind: kind, field: field, expected: expected, got: WireCodec.name(of: found))
        }
        return value
    }

    func optionalString(_ field: String) throws -> String? {
        try value(field, expected: "a string", kindOK: .string)?.stringValue
    }

    func string(_ field: String) throws -> String {
        guard let value = try optionalString(field) else { throw BusProtocolError.missingField(kind: kind, field: field) }
        return value
    }

    func optionalInt(_ field: String) throws -> Int64? {
        guard let value = try value(field, expected: "an integer", kindOK: .number) else { return nil }
        guard case .int(let int) = value else {
            let written = view.compactBytes(of: field).map { String(decoding: $0, as: UTF8.self) } ?? value.jsonText
            throw BusProtocolError.mistypedField(kind: kind, field: field, expected: "an integer (no fraction or exponent, within 64 bits)", got: written)
        }
        return int
    }

    func int(_ field: String) throws -> Int64 {
        guard let value = try optionalInt(field) else { throw BusProtocolError.missingField(kind: kind, field: field) }
        return value
    }

    func nonNegativeInt(_ field: String) throws -> Int64 {
        let value = try int(field)
        guard value >= 0 else {
            throw BusProtocolError.mistypedField(kind: kind, field: field, expected: "a non-negative integer", got: "\(value)")
        }
        return value
    }

    func optionalBool(_ field: String) throws -> Bool? {
        try value(field, expected: "a boolean", kindOK: .bool)?.boolValue
    }

    func optionalStringArray(_ field: String) throws -> [String]? {
        guard let array = try value(field, expected: "an array of strings", kindOK: .array)?.arrayValue else { return nil }
        return try array.map { element in
            guard let string = element.stringValue else {
                throw BusProtocolError.mistypedField(kind: kind, field: field, expected: "an array of strings", got: "an array holding \(element.kindName)")
            }
            return string
        }
    }

    /// A hello's `watch`: an object from App-Group name to an array of key patterns, within `StateWatch`'s limits.
    func optionalStateWatch(_ field: String) throws -> StateWatch? {
        let expected = "an object from App-Group name to an array of key patterns"
        guard let members = try value(field, expected: expected, kindOK: .object)?.objectValue else { return nil }
        var keys: [String: [String]] = [:]
        for (group, patterns) in members {
            guard let array = patterns.arrayValue else {
                throw BusProtocolError.mistypedField(kind: kind, field: field, expected: expected, got: "group '\(group)' given \(patterns.kindName)")
            }
            keys[group] = try array.map { element in
                guard let pattern = element.stringValue else {
                    throw BusProtocolError.mistypedField(kind: kind, field: field, expected: expected, got: "group '\(group)' given an array holding \(element.kindName)")
                }
                return pattern
            }
        }
        let watch = StateWatch(keys)
        if let problem = watch.problem { throw BusProtocolError.badHello("`\(field)`: \(problem)") }
        return watch
    }
}
