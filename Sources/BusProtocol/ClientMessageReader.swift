/// Reads the two messages a plugin sends most — a publish and an ack — in one pass, when they are in the form the
/// Swift SDK writes (`WireCodec.encodePublish`: `v`, `topic`, then `corr`, `deadline`, `cause` and `index` when
/// present, then `body`; an ack as `JSONValue` writes it: `{"seq":…,"v":1}`), with the same checks as the full
/// decode: the topic's syntax, strings' escapes and UTF-8, the body a whole compact JSON object within the size limit.
/// Anything else — another order, whitespace, an unknown member, a value out of place — gives nil, and the message
/// is decoded in full (`Fields`), which accepts every order and names what is wrong.
struct ClientMessageReader {
    private var reader: CompactReader

    init(_ bytes: [UInt8]) { reader = CompactReader(bytes) }

    mutating func publish(maximumBodyBytes: Int) -> Publish? {
        guard reader.skip(#"{"v":1,"topic":"#), let topic = reader.string(), Topic.syntaxProblem(with: topic) == nil,
              let (corr, deadline) = reader.correlation() else { return nil }
        var cause: PublicationCause?
        if reader.skip(#","cause":"#) {
            guard let seq = reader.integer(), seq >= 0, reader.skip(#","index":"#), let index = reader.integer(), index >= 0 else { return nil }
            cause = PublicationCause(seq: UInt64(seq), index: Int(index))
        }
        guard reader.skip(#","body":"#), let body = reader.compactObject(), body.count <= maximumBodyBytes,
              reader.skip("}"), reader.index == reader.end else { return nil }
        return Publish(topic: topic, body: Array(reader.bytes[body]), corr: corr, deadline: deadline, cause: cause)
    }

    /// The acknowledged sequence number.
    mutating func ack() -> UInt64? {
        guard reader.skip(#"{"seq":"#), let seq = reader.integer(), seq >= 0, reader.skip(#","v":1}"#), reader.index == reader.end else { return nil }
        return UInt64(seq)
    }
}
