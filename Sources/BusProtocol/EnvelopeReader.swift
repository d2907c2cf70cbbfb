/// Reads an envelope as the broker writes it (`WireCodec.encodeEnvelope`: fixed member order, compact) in one pass,
/// leaving the body unchecked: the broker validated it when it was published, and its reader checks it when it
/// decodes it (`Envelope.bodyValue`, `JSONDecoder`). Anything that starts otherwise — another order, whitespace, a
/// number written otherwise — is not for this reader: `read` returns nil and the caller decodes it in full. The body
/// is taken to be the last member, as the broker writes it: a member after it is not looked for.
struct EnvelopeReader {
    private var reader: CompactReader

    /// A reader of the envelope in `bytes[range]` (all of them by default): a line of a batch is read in place.
    init(_ bytes: [UInt8], in range: Range<Int>? = nil) {
        reader = CompactReader(bytes, in: range)
    }

    mutating func read() -> Envelope? {
        guard reader.skip(#"{"v":1,"seq":"#), let seq = reader.integer(), seq >= 0,
              reader.skip(#","time":"#), let time = reader.integer(),
              reader.skip(#","topic":"#), let topic = reader.string(),
              reader.skip(#","source":"#), let source = reader.string(), let (corr, deadline) = reader.correlation() else { return nil }
        // The body is the last member: from its `{` to the byte before the envelope's closing `}`.
        let (bytes, end) = (reader.bytes, reader.end)
        guard reader.skip(#","body":"#), end - reader.index >= 3, bytes[reader.index] == UInt8(ascii: "{"),
              bytes[end - 2] == UInt8(ascii: "}"), bytes[end - 1] == UInt8(ascii: "}") else { return nil }
        return Envelope(seq: UInt64(seq), time: time, topic: topic, source: source, corr: corr, deadline: deadline,
                        body: Array(bytes[reader.index..<(end - 1)]))
    }
}
