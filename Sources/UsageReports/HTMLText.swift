import Foundation

/// Escaping and number formatting for the HTML renderer's markup.
enum HTMLText {
    /// Escapes text for element content and double- or single-quoted attributes.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A coordinate with at most two decimals and no "-0", fixed so output is byte-stable.
    static func number(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let sign = hundredths < 0 ? "-" : ""
        let magnitude = abs(hundredths)
        let fraction = magnitude % 100
        guard fraction != 0 else { return sign + "\(magnitude / 100)" }
        let decimals = fraction % 10 == 0 ? "\(fraction / 10)" : TwoDigits.pad(fraction)
        return sign + "\(magnitude / 100).\(decimals)"
    }

    /// A whole percentage, e.g. "42%".
    static func percent(_ part: Double, of whole: Double) -> String {
        whole > 0 ? "\(Int((part / whole * 100).rounded()))%" : "0%"
    }
}

/// The chart colours: one per leading app, grey for the rest, and the heatmap ramp.
enum ChartPalette {
    static let slices = ["#5b5bd6", "#12a594", "#f76b15", "#e5484d", "#8e4ec6", "#e2a336"]
    static let other = "#9aa0b4"
    static let track = "#eceef4"

    /// Heatmap fill for `seconds` within one clock hour: light to deep indigo over 0–60 minutes.
    static func heat(_ seconds: TimeInterval) -> String {
        guard seconds > 0 else { return "#eef0f6" }
        let t = min(1, seconds / 3600)
        let low = (214, 216, 250), high = (52, 44, 180)
        func mix(_ a: Int, _ b: Int) -> Int { Int((Double(a) + Double(b - a) * t).rounded()) }
        return "#" + [mix(low.0, high.0), mix(low.1, high.1), mix(low.2, high.2)]
            .map { hexByte($0) }.joined()
    }

    private static func hexByte(_ value: Int) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[value / 16], digits[value % 16]])
    }
}
