import Foundation

/// Today's apps as an SVG donut with the total in the middle, plus its HTML legend.
struct DonutChart {
    /// One ring segment: an app, or "Other" for the apps past the leading ones.
    struct Slice {
        let name: String
        let seconds: TimeInterval
        let color: String
    }

    let slices: [Slice]
    let totalSeconds: TimeInterval

    /// The leading apps get their own colour; the rest share one "Other" slice.
    init(apps: [AppUsageEntry], totalSeconds: TimeInterval) {
        let leading = apps.count > ChartPalette.slices.count ? ChartPalette.slices.count - 1 : apps.count
        var slices = zip(apps.prefix(leading), ChartPalette.slices).map {
            Slice(name: $0.app, seconds: $0.seconds, color: $1)
        }
        let rest = apps.dropFirst(leading).map(\.seconds).reduce(0, +)
        if rest > 0 {
            slices.append(Slice(name: "Other", seconds: rest, color: ChartPalette.other))
        }
        self.slices = slices
        self.totalSeconds = totalSeconds
    }

    /// The colour of `app` in this chart (grey when it is folded into "Other").
    func color(of app: String) -> String {
        slices.first { $0.name == app && $0.color != ChartPalette.other }?.color ?? ChartPalette.other
    }

    func svg() -> String {
        let size = 240.0, center = 120.0, radius = 88.0, width = 30.0
        let circumference = 2 * Double.pi * radius
        let c = HTMLText.number(center)
        let ring = "cx=\"\(c)\" cy=\"\(c)\" r=\"\(HTMLText.number(radius))\" fill=\"none\" stroke-width=\"\(HTMLText.number(width))\""
        var parts = [
            "<svg class=\"chart donut\" viewBox=\"0 0 \(HTMLText.number(size)) \(HTMLText.number(size))\" width=\"200\" height=\"200\" role=\"img\" aria-label=\"Today's screen time by app: \(HTMLText.escape(DurationText.short(totalSeconds)))\">",
            "<circle \(ring) stroke=\"\(ChartPalette.track)\"/>",
        ]
        let total = slices.map(\.seconds).reduce(0, +)
        var offset = 0.0
        for slice in slices where total > 0 {
            let length = slice.seconds / total * circumference
            // A hairline gap separates neighbouring segments; a lone segment closes the ring.
            let gap = slices.count > 1 ? min(2, length / 2) : 0
            let label = "\(slice.name): \(DurationText.short(slice.seconds)) (\(HTMLText.percent(slice.seconds, of: total)))"
            parts.append("<circle \(ring) stroke=\"\(slice.color)\" stroke-dasharray=\"\(HTMLText.number(length - gap)) \(HTMLText.number(circumference - length + gap))\" stroke-dashoffset=\"\(HTMLText.number(-offset))\" transform=\"rotate(-90 \(c) \(c))\"><title>\(HTMLText.escape(label))</title></circle>")
            offset += length
        }
        parts += [
            "<text x=\"\(c)\" y=\"\(HTMLText.number(center + 4))\" text-anchor=\"middle\" class=\"donut-total\">\(HTMLText.escape(DurationText.short(totalSeconds)))</text>",
            "<text x=\"\(c)\" y=\"\(HTMLText.number(center + 28))\" text-anchor=\"middle\" class=\"donut-caption\">screen time</text>",
            "</svg>",
        ]
        return parts.joined(separator: "\n")
    }

    func legend() -> String {
        guard !slices.isEmpty else { return "<p class=\"empty\">No app usage recorded today.</p>" }
        let total = slices.map(\.seconds).reduce(0, +)
        let items = slices.map { slice in
            "<li><span class=\"swatch\" style=\"background:\(slice.color)\"></span><span class=\"name\">\(HTMLText.escape(slice.name))</span><span class=\"time\">\(HTMLText.escape(DurationText.short(slice.seconds)))</span><span class=\"pct\">\(HTMLText.percent(slice.seconds, of: total))</span></li>"
        }
        return (["<ul class=\"legend\">"] + items + ["</ul>"]).joined(separator: "\n")
    }
}
