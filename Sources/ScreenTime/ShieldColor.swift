import Foundation

/// A color on a shield: 8-bit red, green, blue and alpha (stands in for `UIColor`).
///
/// JSON: a hex string `"#RRGGBBAA"` (decoding also accepts `"#RRGGBB"`, meaning opaque).
public struct ShieldColor: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Red, 0-255.
    public var red: UInt8
    /// Green, 0-255.
    public var green: UInt8
    /// Blue, 0-255.
    public var blue: UInt8
    /// Opacity, 0 (clear) to 255 (opaque).
    public var alpha: UInt8

    /// A color from 8-bit channels: `ShieldColor(0, 122, 255)`.
    public init(_ red: UInt8, _ green: UInt8, _ blue: UInt8, _ alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// A color from channels in 0...1, as `UIColor(red:green:blue:alpha:)`; values are clamped and rounded to 8 bits.
    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.init(Self.byte(red), Self.byte(green), Self.byte(blue), Self.byte(alpha))
    }

    /// A gray from a brightness in 0...1, as `UIColor(white:alpha:)`.
    public init(white: Double, alpha: Double = 1) {
        self.init(red: white, green: white, blue: white, alpha: alpha)
    }

    /// A color from `"#RRGGBB"` or `"#RRGGBBAA"` (the `#` is optional, case doesn't matter); nil if malformed.
    public init?(hex: String) {
        // Read as UTF-8 bytes: every shield's body has five colors, read by the OS and by each plugin that reads the
        // shield, and `Character`s (grapheme breaking, `isHexDigit`) cost them more than the rest of the body. Only
        // ASCII hex digits make a color either way: a `#` with a combining mark, or a digit that is not ASCII, is none.
        var hex = hex
        let color: ShieldColor? = hex.withUTF8 { bytes in
            let digits = bytes.first == UInt8(ascii: "#") ? bytes.dropFirst() : bytes[...]
            guard digits.count == 6 || digits.count == 8 else { return nil }
            var value: UInt32 = 0
            for byte in digits {
                guard let digit = Self.hexDigitValue(byte) else { return nil }
                value = value << 4 | digit
            }
            let rgba = digits.count == 6 ? value << 8 | 0xFF : value
            return ShieldColor(UInt8(rgba >> 24 & 0xFF), UInt8(rgba >> 16 & 0xFF), UInt8(rgba >> 8 & 0xFF), UInt8(rgba & 0xFF))
        }
        guard let color else { return nil }
        self = color
    }

    private static func hexDigitValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// The color as `"#RRGGBBAA"`, upper case.
    public var hex: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(9)
        appendHex(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `hex`'s bytes to `out` (for writers that build JSON byte by byte).
    public func appendHex(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "#"))
        for channel in [red, green, blue, alpha] {
            out.append(Self.hexDigits[Int(channel >> 4)])
            out.append(Self.hexDigits[Int(channel & 0xF)])
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// The four channels at once (UIKit's names `red`, `green` and `blue` are also its named colors).
    public var channels: (red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8) { (red, green, blue, alpha) }

    /// The hex form.
    public var description: String { hex }

    /// Opaque black.
    public static let black = ShieldColor(0, 0, 0)
    /// Opaque white.
    public static let white = ShieldColor(255, 255, 255)
    /// Fully transparent.
    public static let clear = ShieldColor(0, 0, 0, 0)
    /// Mid gray, as `UIColor.gray` (white 0.5).
    public static let gray = ShieldColor(white: 0.5)
    /// Dark gray, as `UIColor.darkGray` (white 1/3).
    public static let darkGray = ShieldColor(white: 1.0 / 3.0)
    /// Light gray, as `UIColor.lightGray` (white 2/3).
    public static let lightGray = ShieldColor(white: 2.0 / 3.0)
    /// The system's blue (light appearance), the default button color.
    public static let systemBlue = ShieldColor(0, 122, 255)
    /// The system's red (light appearance).
    public static let systemRed = ShieldColor(255, 59, 48)

    /// Decodes a hex string.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let color = ShieldColor(hex: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a color: write \"#RRGGBB\" or \"#RRGGBBAA\" in hex.")
        }
        self = color
    }

    /// Encodes `"#RRGGBBAA"`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    private static func byte(_ value: Double) -> UInt8 {
        UInt8((min(max(value, 0), 1) * 255).rounded())
    }
}
