import Foundation

/// Screen time per day as an SVG bar chart, the last day highlighted: a week with the
/// weekday, date and time of every bar; a month or longer run with the day of the month
/// under every few bars (times in each bar's tooltip).
struct DayBarChart {
    struct Bar {
        let day: LocalDay
        let seconds: TimeInterval
    }

    let bars: [Bar]

    /// Every bar is labelled in full up to this many bars.
    private static let fullyLabelled = 7

    func svg() -> String {
        let full = bars.count <= Self.fullyLabelled
        let width = 480.0, height = 270.0
        // A long run's last label ("30 Nov") is centred under a narrow bar at the edge: room for its half.
        let left = 36.0, right = full ? 8.0 : 18.0, top = 30.0, bottom = 46.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let axisHours = Self.axis(longest: bars.map(\.seconds).max() ?? 0)
        let axisSeconds = Double(axisHours.maximum) * 3600
        let baseline = top + plotHeight
        let labelEvery = full ? 1 : max(1, Int((Double(bars.count) / 8).rounded(.up)))
        var parts = ["<svg class=\"chart day-bars\" viewBox=\"0 0 \(HTMLText.number(width)) \(HTMLText.number(height))\" width=\"100%\" role=\"img\" aria-label=\"Screen time per day\">"]
        for hour in stride(from: 0, through: axisHours.maximum, by: axisHours.step) {
            let y = HTMLText.number(baseline - Double(hour) * 3600 / axisSeconds * plotHeight)
            parts.append("<line x1=\"\(HTMLText.number(left))\" y1=\"\(y)\" x2=\"\(HTMLText.number(width - right))\" y2=\"\(y)\" class=\"gridline\"/>")
            parts.append("<text x=\"\(HTMLText.number(left - 8))\" y=\"\(y)\" dy=\"4\" text-anchor=\"end\" class=\"axis\">\(hour)h</text>")
        }
        let slot = plotWidth / Double(max(bars.count, 1))
        let barWidth = slot * (full ? 0.58 : 0.7)
        for (index, bar) in bars.enumerated() {
            let isLast = index == bars.count - 1
            let x = left + Double(index) * slot + (slot - barWidth) / 2
            let middle = HTMLText.number(x + barWidth / 2)
            let barHeight = bar.seconds / axisSeconds * plotHeight
            let label = "\(bar.day.shortWeekdayName) \(bar.day.shortTitle): \(DurationText.short(bar.seconds))"
            if barHeight > 0 {
                parts.append("<rect x=\"\(HTMLText.number(x))\" y=\"\(HTMLText.number(baseline - barHeight))\" width=\"\(HTMLText.number(barWidth))\" height=\"\(HTMLText.number(barHeight))\" rx=\"\(HTMLText.number(min(full ? 6 : 2, barHeight / 2)))\" class=\"bar\(isLast ? " current" : "")\"><title>\(HTMLText.escape(label))</title></rect>")
            }
            if full {
                parts.append("<text x=\"\(middle)\" y=\"\(HTMLText.number(baseline - barHeight - 8))\" text-anchor=\"middle\" class=\"bar-value\(isLast ? " current" : "")\">\(HTMLText.escape(DurationText.short(bar.seconds)))</text>")
                parts.append("<text x=\"\(middle)\" y=\"\(HTMLText.number(baseline + 20))\" text-anchor=\"middle\" class=\"day\(isLast ? " current" : "")\">\(bar.day.shortWeekdayName)</text>")
                parts.append("<text x=\"\(middle)\" y=\"\(HTMLText.number(baseline + 37))\" text-anchor=\"middle\" class=\"axis\">\(HTMLText.escape(bar.day.shortTitle))</text>")
            } else if (bars.count - 1 - index) % labelEvery == 0 {  // counted back from the last day, so labels never crowd it
                parts.append("<text x=\"\(middle)\" y=\"\(HTMLText.number(baseline + 20))\" text-anchor=\"middle\" class=\"axis\">\(HTMLText.escape(bar.day.shortTitle))</text>")
            }
        }
        parts.append("<line x1=\"\(HTMLText.number(left))\" y1=\"\(HTMLText.number(baseline))\" x2=\"\(HTMLText.number(width - right))\" y2=\"\(HTMLText.number(baseline))\" class=\"baseline\"/>")
        parts.append("</svg>")
        return parts.joined(separator: "\n")
    }

    /// Whole hours for the value axis: a round maximum at or above the longest day, and a
    /// gridline step that keeps at most about five lines.
    static func axis(longest seconds: TimeInterval) -> (maximum: Int, step: Int) {
        let hours = max(1, Int((seconds / 3600).rounded(.up)))
        let step = [1, 2, 3, 4, 6, 8, 12].first { hours <= $0 * 5 } ?? 24
        return (maximum: (hours + step - 1) / step * step, step: step)
    }
}
