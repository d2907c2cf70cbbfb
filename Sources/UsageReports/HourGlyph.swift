import Foundation

/// One character for the use within a clock hour, for terminal sparklines and heatmaps:
/// "·" for none, then "▁" … "█" in eighths of an hour (rounded up, so any use shows).
enum HourGlyph {
    private static let levels: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    static func glyph(_ seconds: TimeInterval) -> Character {
        guard seconds > 0 else { return "·" }
        let eighths = Int((seconds / 3600 * 8).rounded(.up))
        return levels[min(8, max(1, eighths)) - 1]
    }

    /// 24 glyphs for one day.
    static func line(_ hourly: [TimeInterval]) -> String {
        String(hourly.map(glyph))
    }

    /// Hour labels aligned over `line(_:)`: "0     6     12    18    ".
    static let axis: String = stride(from: 0, to: 24, by: 6)
        .map { String($0).padding(toLength: 6, withPad: " ", startingAt: 0) }
        .joined()
}
