// HexDigits: a byte written as two lowercase hexadecimal digits, as JSON's `\u00XX` escapes and credentials spell it.

/// Writes bytes as lowercase hexadecimal digits into a byte buffer (no `String` per byte).
public enum HexDigits {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `byte` to `out` as two digits, the high nibble first.
    @inline(__always)
    public static func append(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0xF)])
    }
}
