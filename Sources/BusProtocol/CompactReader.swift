/// A cursor over JSON written in one known compact form (fixed member order, no whitespace): the readers of the
/// broker's own envelopes and of a Swift publisher's publishes step through such a message in one pass, and say
/// nil at the first byte that is not in that form, so that the caller decodes it in full (which names what is wrong).
struct CompactReader {
    let bytes: [UInt8]
    /// Where the message ends: the end of the frame, or of its line in a batch.
    let end: Int
    var parser: JSONParser

    /// A reader of the message in `bytes[range]` (all of them by default): a line of a batch is read in place.
    init(_ bytes: [UInt8], in range: Range<Int>? = nil) {
        self.bytes = bytes
        end = range?.upperBound ?? bytes.count
        parser = JSONParser(bytes)
        parser.index = range?.lowerBound ?? 0
    }

    var index: Int { parser.index }

    /// Moves past `literal` when the bytes continue with it.
    mutating func skip(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard end - parser.index >= count else { return false }
        let matches = literal.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[parser.index + $0] == expected[$0] }
        }
        if matches { parser.index += count }
        return matches
    }

    /// An integer written as the broker writes one: an optional minus, then digits without a leading zero.
    mutating func integer() -> Int64? {
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
    mutating func string() -> String? {
        guard parser.index < end, bytes[parser.index] == UInt8(ascii: "\"") else { return nil }
        return try? parser.parseString()
    }

    /// The optional `corr` and `deadline` members, in that order (an envelope and a publish both carry them so);
    /// nil when one is there but not in the expected form.
    mutating func correlation() -> (corr: String?, deadline: BusTime?)? {
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
        return (corr, deadline)
    }

    /// A JSON object, checked in full (syntax, UTF-8, nesting as a member of the message: one level down) and
    /// without insignificant whitespace; the range of its bytes. Nil for anything else.
    mutating func compactObject() -> Range<Int>? {
        let start = parser.index
        guard start < end, bytes[start] == UInt8(ascii: "{") else { return nil }
        parser.sawWhitespace = false
        guard let kind = try? parser.skipValue(depth: 1), kind == .object, !parser.sawWhitespace, parser.index <= end else { return nil }
        return start..<parser.index
    }
}
