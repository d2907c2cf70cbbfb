import Foundation
import ShieldBusSDK
import UsageReports

/// The report builder's per-day aggregates in its App-Group store, one key per local day (`reports.day.2026-11-25`),
/// a roll-up of each month's days (`reports.month.2026-11`), and the latest finished day's report (`reports.daily.latest`).
///
/// The App-Group store rather than a private file: it is crash-safe (SQLite, WAL, atomic writes), announces each
/// change on the bus, and lets the companion app and `shieldbus state` read the numbers directly — which a
/// sandboxed iOS report extension cannot offer.
struct DayStore {
    /// The recorder's state: the span in progress, so a new process goes on with it.
    static let recorderKey = "reports.recorder"

    let defaults: SharedDefaults

    /// Every stored day. A day that does not decode is an error naming its key, never skipped: skipping it would
    /// let the next write replace it with a fresh, nearly empty day.
    func loadAll() throws -> [DayUsage] {
        try defaults.allKeys.filter { StoredDayKey.day(ofKey: $0) != nil }.compactMap { try defaults.value(DayUsage.self, forKey: $0) }
    }

    /// Writes these days, and the recorder when given, in one transaction.
    func save(_ days: [DayUsage], recorder: UsageRecorder?) throws {
        guard !days.isEmpty || recorder != nil else { return }
        try defaults.transaction { store in
            for usage in days { try store.set(usage, forKey: StoredDayKey.key(usage.day)) }
            if let recorder { try store.set(recorder, forKey: Self.recorderKey) }
        }
    }

    /// The recorder a previous process left (a new one when there is none).
    func loadRecorder() throws -> UsageRecorder {
        try defaults.value(UsageRecorder.self, forKey: Self.recorderKey) ?? UsageRecorder()
    }

    /// Rolls the stored days of `month` up into its `MonthRollup`, from the days as stored and with their versions
    /// (read in the same transaction), so a reader can tell whether the roll-up still sums them.
    func saveRollup(of month: LocalMonth) throws {
        try defaults.transaction { store in
            var days: [(usage: DayUsage, version: Int64)] = []
            for offset in 0..<month.lastDay.day {
                guard let entry = try store.entry(forKey: StoredDayKey.key(month.firstDay.adding(days: offset))) else { continue }
                days.append((try entry.value(DayUsage.self), entry.version))
            }
            guard let zone = days.first?.usage.timeZoneIdentifier else { return }
            try store.set(MonthRollup(month: month, timeZoneIdentifier: zone, days: days), forKey: StoredDayKey.key(month))
        }
    }

    /// Removes the stored days before `oldestKept`, and the roll-ups of the months that ended before it.
    func removeDays(before oldestKept: LocalDay) throws {
        let stale = try defaults.allKeys.filter { key in
            StoredDayKey.day(ofKey: key).map { $0 < oldestKept } == true
                || StoredDayKey.month(ofKey: key).map { $0.lastDay < oldestKept } == true
        }
        guard !stale.isEmpty else { return }
        try defaults.transaction { store in
            for key in stale { try store.removeObject(forKey: key) }
        }
    }

    func saveLatest(_ report: DailyReport) throws {
        try defaults.set(report, forKey: StoredDayKey.latestDaily)
    }
}
