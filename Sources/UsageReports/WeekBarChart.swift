import Foundation

/// The week as an SVG bar chart: one bar per day, weekday and date below, time on top,
/// the report day highlighted.
struct WeekBarChart {
    let days: [WeeklyReport.Day]

    func svg() -> String {
        let width = 480.0, height = 270.0
        let left = 36.0, right = 8.0, top = 30.0, bottom = 46.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let axisHours = Self.axis(longest: days.map(\.totalSeconds).max() ?? 0)
        let axisSeconds = Double(axisHours.maximum) * 3600
        let baseline = top + plotHeight
        var parts = ["<svg class=\"chart week-bars\" viewBox=\"0 0 \(HTMLText.number(width)) \(HTMLText.number(height))\" width=\"100%\" role=\"img\" aria-label=\"Screen time per day this week\">"]
        for hour in stride(from: 0, through: axisHours.maximum, by: axisHours.step) {
            let y = HTMLText.number(baseline - Double(hour) * 3600 / axisSeconds * plotHeight)
            parts.append("<line x1=\"\(HTMLText.number(left))\" y1=\"\(y)\" x2=\"\(HTMLText.number(width - right))\" y2=\"\(y)\" class=\"gridline\"/>")
            parts.append("<text x=\"\(HTMLText.number(left - 8))\" y=\"\(y)\" dy=\"4\" text-anchor=\"end\" class=\"axis\">\(hour)h</text>")
        }
        let slot = plotWidth / Double(max(days.count, 1))
        let barWidth = slot * 0.58
        for (index, day) in days.enumerated() {
            let isReportDay = index == days.count - 1
            let x = left + Double(index) * slot + (slot - barWidth) / 2
            let middle = HTMLText.number(x + barWidth / 2)
            let barHeight = day.totalSeconds / axisSeconds * plotHeight
            let label = "\(day.weekday) \(day.day.shortTitle): \(DurationText.short(day.totalSeconds))"
            if barHeight > 0 {
                parts.append("<rect x=\"\(HTMLText.number(x))\" y=\"\(HTMLText.number(baseline - barHeight))\" width=\"\(HTMLText.number(barWidth))\" height=\"\(HTMLText.number(barHeight))\" rx=\"\(HTMLText.number(min(6, barHeight / 2)))\" fill=\"\(isReportDay ? ChartPalette.accent : ChartPalette.accentSoft)\"><title>\(HTMLText.escape(label))</title></rect>")
            }
            parts.append("<text x=\"\(middle)\" y=\"\(HTMLText.number(baseline - barHeight - 8))\" text-anchor=\"middle\" class=\"bar-value\(isReportDay ? " current" : "")\">\(HTMLText.escape(DurationText.short(day.totalSeconds)))</text>")
            parts.append("<text x=\"\(middle)\" y=\"\(HTMLText.number(baseline + 20))\" text-anchor=\"middle\" class=\"day\(isReportDay ? " current" : "")\">\(day.weekday)</text>")
            parts.append("<text x=\"\(middle)\" y=\"\(HTMLText.number(baseline + 37))\" text-anchor=\"middle\" class=\"axis\">\(HTMLText.escape(day.day.shortTitle))</text>")
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
