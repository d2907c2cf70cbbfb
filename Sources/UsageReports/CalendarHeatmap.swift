import Foundation

/// A month (or any run of days) as a calendar: weeks as rows Monday to Sunday, each day a
/// cell coloured by its screen time relative to the run's longest day, with the day of the
/// month and the time in it. Days outside the run are left blank.
struct CalendarHeatmap {
    let days: [RangeReport.Day]

    func svg() -> String {
        let cell = 62.0, cellHeight = 48.0, gap = 5.0, top = 22.0
        let leading = (days.first?.day.weekday ?? 1) - 1
        let weeks = (leading + days.count + 6) / 7
        let width = 7 * (cell + gap) - gap
        let height = top + Double(weeks) * (cellHeight + gap)
        let longest = max(days.map(\.totalSeconds).max() ?? 0, 1)
        var parts = ["<svg class=\"chart calendar\" viewBox=\"0 0 \(HTMLText.number(width)) \(HTMLText.number(height))\" width=\"100%\" role=\"img\" aria-label=\"Screen time per day on a calendar\">"]
        for (column, name) in ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].enumerated() {
            parts.append("<text x=\"\(HTMLText.number(Double(column) * (cell + gap) + cell / 2))\" y=\"14\" text-anchor=\"middle\" class=\"axis\">\(name)</text>")
        }
        for (index, day) in days.enumerated() {
            let slot = leading + index
            let x = Double(slot % 7) * (cell + gap), y = top + Double(slot / 7) * (cellHeight + gap)
            let fill = ChartPalette.heat(day.totalSeconds / longest * 3600)
            let dark = day.totalSeconds / longest >= 0.6
            let label = "\(day.weekday) \(day.day.shortTitle): \(DurationText.short(day.totalSeconds))"
            parts.append("<rect x=\"\(HTMLText.number(x))\" y=\"\(HTMLText.number(y))\" width=\"\(HTMLText.number(cell))\" height=\"\(HTMLText.number(cellHeight))\" rx=\"6\" fill=\"\(fill)\"><title>\(HTMLText.escape(label))</title></rect>")
            parts.append("<text x=\"\(HTMLText.number(x + 6))\" y=\"\(HTMLText.number(y + 16))\" class=\"key\(dark ? " on-dark" : "")\">\(day.day.day)</text>")
            parts.append("<text x=\"\(HTMLText.number(x + cell / 2))\" y=\"\(HTMLText.number(y + 38))\" text-anchor=\"middle\" class=\"cal-time\(dark ? " on-dark" : "")\">\(HTMLText.escape(DurationText.short(day.totalSeconds)))</text>")
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n")
    }
}
