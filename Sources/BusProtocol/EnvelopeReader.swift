/// Reads an envelope as the broker writes it (`WireCodec.encodeEnvelope`: fixed member order, compact) in one pass,
/// leaving the body unchecked: the broker validated it when it was published, and its reader checks it when it
/// decodes it (`Envelope.bodyValue`, `JSONDecoder`). Anything that starts otherwise — another order, whitespace, a
/// number written otherwise — is not for this reader: `read` returns nil and the caller decodes it in full. The body
/// is taken to be the last member, as the broker writes it: a member after it is not looked for.
struct EnvelopeReader {
    private let bytes: [UInt8]
    /// Where the envelope ends: the end of the frame, or of its line in a batch.
    private let end: Int
    private var parser: JSONParser

    /// A reader of the envelope in `bytes[range]` (all of them by default): a line of a batch is read in place.
    init(_ bytes: [UInt8], in range: Range<Int>? = nil) {
        self.bytes = bytes
        end = range?.upperBound ?? bytes.count
        parser = JSONParser(bytes)
        parser.index = range?.lowerBound ?? 0
    }

    mutating func read() -> Envelope? {
        guard skip(#"{"v":1,"seq":"#), let seq = integer(), seq >= 0,
              skip(#","time":"#), let time = integer(),
              skip(#","topic":"#), let topic = string(),
              skip(#","source":"#), let source = string() else { return nil }
        var corr: String?
        if skip(#","corr":"#) {
            guard let value = string() else { return nil }
            corr = value
        }
        var deadline: BusTime?
        if skip(#","deadline":"#) {
            guard let value = integer() else { return nil }
            deadline = value
        }
        // The body is the last member: from its `{` to the byte before the envelope's closing `}`.
        guard skip(#","body":"#), end - parser.index >= 3, bytes[parser.index] == UInt8(ascii: "{"),
              bytes[end - 2] == UInt8(ascii: "}"), bytes[end - 1] == UInt8(ascii: "}") else { return nil }
        return Envelope(seq: UInt64(seq), time: time, topic: topic, source: source, corr: corr, deadline: deadline,
                        body: Array(bytes[parser.index..<(end - 1)]))
    }

    /// Moves past `literal` when the bytes continue with it.
    private mutating func skip(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard end - parser.index >= count else { return false }
        let matches = literal.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[parser.index + $0] == expected[$0] }
        }
        if matches { parser.index += count }
        return matches
    }

    /// An integer written as the broker writes one: an optional minus, then digits without a leading zero.
    private mutating func integer() -> Int64? {
        var index = parser.index
        let negative = index < end && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let first = index
        var value: Int64 = 0
        while index < end, parser.isDigit(bytes[index]) {
            let digit = Int64(bytes[index] - UInt8(ascii: "0"))
            let (times10, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = negative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
            guard !overflowA, !overflowB else { return nil }
            value = next
            index += 1
        }
        guard index > first, index - first == 1 || bytes[first] != UInt8(ascii: "0") else { return nil }
        parser.index = index
        return value
    }

    /// A JSON string, escapes and UTF-8 checked.
    private mutating func string() -> String? {
        guard parser.index < end, bytes[parser.index] == UInt8(ascii: "\"") else { return nil }
        return try? parser.parseString()
    }
}
