import Foundation
import UsageReports

/// Wall-clock helpers for Europe/Berlin, the zone of every fixture.
enum Berlin {
    static let zone = TimeZone(identifier: "Europe/Berlin")!

    static var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// "2026-03-08 08:50" on Berlin's wall clock.
    static func at(_ text: String) -> Date {
        let parts = text.split(whereSeparator: { "- :".contains($0) }).map { Int($0)! }
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2],
                                                  hour: parts[3], minute: parts[4]))!
    }

    static func day(_ text: String) -> LocalDay { LocalDay(text)! }
}

/// An absolute instant, for times that are ambiguous on the wall clock (DST).
func utc(_ text: String) -> Date {
    ISO8601DateFormatter().date(from: text)!
}

/// The hand-computed week: Monday 2 March – Sunday 8 March 2026 in Europe/Berlin (CET,
/// UTC+1, no DST change). Apps: Instagram and WhatsApp (Social), Notes and Mail
/// (Productivity). Tuesday has no record at all.
enum FixedWeek {
    static let sunday = Berlin.at("2026-03-08 12:00")

    static func app(_ name: String, _ from: String, _ to: String) -> UsageRecord {
        let category = ["Instagram", "WhatsApp"].contains(name) ? "Social" : "Productivity"
        return .appUsage(app: name, category: category, start: Berlin.at(from), end: Berlin.at(to))
    }

    static func web(_ domain: String, _ from: String, _ to: String, isPrivate: Bool = false) -> UsageRecord {
        .webUsage(domain: domain, start: Berlin.at(from), end: Berlin.at(to), isPrivate: isPrivate)
    }

    static let records: [UsageRecord] = [
        // Monday: Notes 09:00–09:30 = 1800 s (h9), Instagram 19:00–20:00 = 3600 s (h19) → 5400 s.
        app("Notes", "2026-03-02 09:00", "2026-03-02 09:30"),
        app("Instagram", "2026-03-02 19:00", "2026-03-02 20:00"),
        web("example.com", "2026-03-02 10:00", "2026-03-02 10:10"),
        .pickup(app: "Notes", at: Berlin.at("2026-03-02 09:00")),
        .pickup(app: "Instagram", at: Berlin.at("2026-03-02 19:00")),
        // Wednesday: Mail 08:00–08:40 = 2400 s (h8), WhatsApp 18:00–18:30 = 1800 s (h18) → 4200 s.
        app("Mail", "2026-03-04 08:00", "2026-03-04 08:40"),
        app("WhatsApp", "2026-03-04 18:00", "2026-03-04 18:30"),
        // Thursday: Instagram 22:00–23:00 = 3600 s (h22).
        app("Instagram", "2026-03-05 22:00", "2026-03-05 23:00"),
        // Friday: Notes 14:00–16:00 = 3600 s (h14) + 3600 s (h15), Instagram 17:00–17:30 = 1800 s → 9000 s.
        app("Notes", "2026-03-06 14:00", "2026-03-06 16:00"),
        app("Instagram", "2026-03-06 17:00", "2026-03-06 17:30"),
        // Saturday: WhatsApp 11:00–11:20 = 1200 s, Mail 15:00–16:00 = 3600 s,
        // Instagram 23:40–00:20 crosses midnight: 1200 s on Saturday (h23), 1200 s on Sunday (h0).
        app("WhatsApp", "2026-03-07 11:00", "2026-03-07 11:20"),
        app("Mail", "2026-03-07 15:00", "2026-03-07 16:00"),
        app("Instagram", "2026-03-07 23:40", "2026-03-08 00:20"),
        .pickup(app: "WhatsApp", at: Berlin.at("2026-03-07 11:00")),
        .pickup(app: "Mail", at: Berlin.at("2026-03-07 15:00")),
        .pickup(app: "Instagram", at: Berlin.at("2026-03-07 23:40")),
        .gracePassUsed(at: Berlin.at("2026-03-07 15:30")),
        .gracePassUsed(at: Berlin.at("2026-03-07 23:45")),
        // Sunday: Instagram 08:50–09:20 crosses 09:00: 600 s (h8) + 1200 s (h9).
        app("Instagram", "2026-03-08 08:50", "2026-03-08 09:20"),
        app("Notes", "2026-03-08 10:00", "2026-03-08 10:45"),       // 2700 s (h10)
        app("WhatsApp", "2026-03-08 12:15", "2026-03-08 12:30"),    // 900 s (h12)
        app("Mail", "2026-03-08 20:00", "2026-03-08 20:20"),        // 1200 s (h20)
        app("Instagram", "2026-03-08 21:30", "2026-03-08 22:10"),   // 1800 s (h21) + 600 s (h22)
        web("example.com", "2026-03-08 09:00", "2026-03-08 09:30"), // 1800 s
        web("news.example", "2026-03-08 13:00", "2026-03-08 13:10"), // 600 s
        web("example.com", "2026-03-08 19:55", "2026-03-08 20:05"), // 600 s across 20:00
        web("secret.example", "2026-03-08 14:00", "2026-03-08 15:00", isPrivate: true), // never counted
        // Listed before the earlier 07:45 pickup: the first pickup is the earliest, not the first ingested.
        .pickup(app: "Instagram", at: Berlin.at("2026-03-08 08:50")),
        .pickup(app: "WhatsApp", at: Berlin.at("2026-03-08 07:45")),
        .pickup(app: "Notes", at: Berlin.at("2026-03-08 10:00")),
        .pickup(app: "WhatsApp", at: Berlin.at("2026-03-08 12:15")),
        .pickup(app: "Instagram", at: Berlin.at("2026-03-08 21:30")),
        .notification(source: "WhatsApp", at: Berlin.at("2026-03-08 07:40")),
        .notification(source: "WhatsApp", at: Berlin.at("2026-03-08 12:10")),
        .notification(source: "WhatsApp", at: Berlin.at("2026-03-08 18:00")),
        .notification(source: "Mail", at: Berlin.at("2026-03-08 09:05")),
        .shieldEncounter(target: "Instagram", at: Berlin.at("2026-03-08 14:00")),
        .shieldEncounter(target: "Instagram", at: Berlin.at("2026-03-08 16:00")),
        .shieldEncounter(target: "example.com", at: Berlin.at("2026-03-08 16:30")),
        .gracePassUsed(at: Berlin.at("2026-03-08 16:01")),
        .nudgeUsed(at: Berlin.at("2026-03-08 14:01")),
        .nudgeUsed(at: Berlin.at("2026-03-08 16:31")),
    ]

    static func ledger(_ records: [UsageRecord] = records) throws -> UsageLedger {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        try ledger.ingest(contentsOf: records)
        return ledger
    }
}

/// Deterministic synthetic usage (SplitMix64), for volume tests and the rendered sample.
struct SyntheticUsage {
    static let apps: [(name: String, category: String, weight: Int)] = [
        ("Instagram", "Social", 9), ("WhatsApp", "Social", 7), ("YouTube", "Entertainment", 6),
        ("Safari", "Productivity", 5), ("Mail", "Productivity", 4), ("Notes", "Productivity", 3),
        ("<Tom & \"Jerry\">", "Games", 2), ("Maps", "Travel", 1),
    ]
    static let domains = ["wikipedia.org", "news.example", "docs.swift.org"]

    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }

    /// About 20–40 records per day on each of `days` days ending on `last`, with whole-second
    /// times; the sum of all app span lengths is returned with them.
    mutating func records(days: Int, endingOn last: LocalDay) -> (records: [UsageRecord], appSeconds: TimeInterval) {
        var records: [UsageRecord] = []
        var appSeconds: TimeInterval = 0
        let weighted = Self.apps.flatMap { app in Array(repeating: app, count: app.weight) }
        for offset in stride(from: days - 1, through: 0, by: -1) {
            let day = last.adding(days: -offset)
            let morning = Berlin.calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day, hour: 7))!
            // Busier towards the end of the period, so the sample shows a trend.
            let sessions = 8 + next(6) + (days - offset > days - 3 ? 4 : 0)
            for _ in 0..<sessions {
                let app = weighted[next(weighted.count)]
                let start = morning.addingTimeInterval(TimeInterval(next(17 * 3600)))
                let length = TimeInterval(120 + next(40 * 60))
                records.append(.appUsage(app: app.name, category: app.category, start: start, end: start + length))
                appSeconds += length
                if next(3) == 0 { records.append(.pickup(app: app.name, at: start)) }
                if next(2) == 0 { records.append(.notification(source: app.name, at: start - 30)) }
                if next(8) == 0 { records.append(.shieldEncounter(target: app.name, at: start + 60)) }
            }
            for _ in 0..<next(5) {
                let domain = Self.domains[next(Self.domains.count)]
                let start = morning.addingTimeInterval(TimeInterval(next(15 * 3600)))
                records.append(.webUsage(domain: domain, start: start, end: start + TimeInterval(60 + next(1800)),
                                         isPrivate: next(4) == 0))
            }
            for _ in 0..<next(4) { records.append(.gracePassUsed(at: morning + TimeInterval(next(16 * 3600)))) }
            for _ in 0..<next(3) { records.append(.nudgeUsed(at: morning + TimeInterval(next(16 * 3600)))) }
        }
        return (records, appSeconds)
    }
}
