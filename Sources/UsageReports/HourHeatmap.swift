import Foundation

/// The hour-by-day heatmap: 7 rows (days) × 24 columns (clock hours), colour intensity
/// by the minutes used in that hour (0–60), with hour labels and a key.
struct HourHeatmap {
    let days: [WeeklyReport.Day]
    let hourByDay: [[TimeInterval]]

    func svg() -> String {
        let labelWidth = 84.0, top = 26.0, cell = 34.0, cellHeight = 26.0, gap = 4.0
        let width = labelWidth + 24 * (cell + gap)
        let gridBottom = top + Double(days.count) * (cellHeight + gap)
        let height = gridBottom + 34
        var parts = ["<svg class=\"chart heatmap\" viewBox=\"0 0 \(HTMLText.number(width)) \(HTMLText.number(height))\" width=\"100%\" role=\"img\" aria-label=\"Minutes of screen time per hour and day\">"]
        for hour in 0..<24 {
            let x = labelWidth + Double(hour) * (cell + gap) + cell / 2
            parts.append("<text x=\"\(HTMLText.number(x))\" y=\"\(HTMLText.number(top - 9))\" text-anchor=\"middle\" class=\"axis\">\(TwoDigits.pad(hour))</text>")
        }
        for (row, (day, hourly)) in zip(days, hourByDay).enumerated() {
            let y = top + Double(row) * (cellHeight + gap)
            parts.append("<text x=\"0\" y=\"\(HTMLText.number(y + cellHeight / 2 + 4))\" class=\"day\">\(day.weekday) <tspan class=\"axis\">\(HTMLText.escape(day.day.shortTitle))</tspan></text>")
            for (hour, seconds) in hourly.enumerated() {
                let x = labelWidth + Double(hour) * (cell + gap)
                let label = "\(day.weekday) \(day.day.shortTitle), \(TwoDigits.pad(hour)):00: \(DurationText.short(seconds))"
                parts.append("<rect x=\"\(HTMLText.number(x))\" y=\"\(HTMLText.number(y))\" width=\"\(HTMLText.number(cell))\" height=\"\(HTMLText.number(cellHeight))\" rx=\"4\" fill=\"\(ChartPalette.heat(seconds))\"><title>\(HTMLText.escape(label))</title></rect>")
            }
        }
        // The key: five sample fills from none to a full hour.
        let keyY = gridBottom + 10
        var keyX = width - 5 * (cell + gap) - 70
        parts.append("<text x=\"\(HTMLText.number(keyX - 8))\" y=\"\(HTMLText.number(keyY + 13))\" text-anchor=\"end\" class=\"axis\">minutes per hour</text>")
        for minutes in stride(from: 0, through: 60, by: 15) {
            parts.append("<rect x=\"\(HTMLText.number(keyX))\" y=\"\(HTMLText.number(keyY))\" width=\"\(HTMLText.number(cell))\" height=\"18\" rx=\"4\" fill=\"\(ChartPalette.heat(Double(minutes * 60)))\"/>")
            parts.append("<text x=\"\(HTMLText.number(keyX + cell / 2))\" y=\"\(HTMLText.number(keyY + 13))\" text-anchor=\"middle\" class=\"key\(minutes >= 45 ? " on-dark" : "")\">\(minutes)</text>")
            keyX += cell + gap
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n")
    }
}
