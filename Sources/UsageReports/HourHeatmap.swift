import Foundation

/// The hour-by-day heatmap: one row per day × one column per clock hour, colour intensity
/// by the minutes used (0–60 an hour), with hour labels and a key. The compact variant, for
/// phone widths, folds three hours into a column so its labels stay readable.
struct HourHeatmap {
    let days: [WeeklyReport.Day]
    let hourByDay: [[TimeInterval]]
    /// 1 (24 columns) or 3 (8 columns, the compact variant).
    var hoursPerColumn = 1

    func svg() -> String {
        let compact = hoursPerColumn > 1
        let columns = 24 / hoursPerColumn
        let labelWidth = compact ? 64.0 : 84.0, top = 26.0, cell = compact ? 30.0 : 34.0, cellHeight = 26.0, gap = 4.0
        let width = labelWidth + Double(columns) * (cell + gap)
        let gridBottom = top + Double(days.count) * (cellHeight + gap)
        let height = gridBottom + 34
        let name = compact ? "chart heatmap compact" : "chart heatmap"
        var parts = ["<svg class=\"\(name)\" viewBox=\"0 0 \(HTMLText.number(width)) \(HTMLText.number(height))\" width=\"100%\" role=\"img\" aria-label=\"Minutes of screen time per hour and day\">"]
        for column in 0..<columns {
            let x = labelWidth + Double(column) * (cell + gap) + cell / 2
            parts.append("<text x=\"\(HTMLText.number(x))\" y=\"\(HTMLText.number(top - 9))\" text-anchor=\"middle\" class=\"axis\">\(TwoDigits.pad(column * hoursPerColumn))</text>")
        }
        for (row, (day, hourly)) in zip(days, hourByDay).enumerated() {
            let y = top + Double(row) * (cellHeight + gap)
            let dayLabel = compact ? day.weekday : "\(day.weekday) <tspan class=\"axis\">\(HTMLText.escape(day.day.shortTitle))</tspan>"
            parts.append("<text x=\"0\" y=\"\(HTMLText.number(y + cellHeight / 2 + 4))\" class=\"day\">\(dayLabel)</text>")
            for column in 0..<columns {
                let first = column * hoursPerColumn
                let seconds = hourly[first..<(first + hoursPerColumn)].reduce(0, +)
                let x = labelWidth + Double(column) * (cell + gap)
                let hours = compact ? "\(TwoDigits.pad(first)):00–\(TwoDigits.pad(first + hoursPerColumn)):00" : "\(TwoDigits.pad(first)):00"
                let label = "\(day.weekday) \(day.day.shortTitle), \(hours): \(DurationText.short(seconds))"
                parts.append("<rect x=\"\(HTMLText.number(x))\" y=\"\(HTMLText.number(y))\" width=\"\(HTMLText.number(cell))\" height=\"\(HTMLText.number(cellHeight))\" rx=\"4\" fill=\"\(ChartPalette.heat(seconds / Double(hoursPerColumn)))\"><title>\(HTMLText.escape(label))</title></rect>")
            }
        }
        // The key: five sample fills from none to a full hour.
        let keyY = gridBottom + 10
        var keyX = width - 5 * (cell + gap)
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
