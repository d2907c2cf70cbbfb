import AppGroupStore
import Foundation
import UsageReports

/// Reports made from the report builder's days in its App-Group store, read directly (no broker needed; reading
/// never writes, and SQLite's write-ahead log lets it read while a broker writes). Only finished spans are stored,
/// so the use in progress is not included. "Today" is the last day the store holds (a played day's date), else today
/// on this machine's clock, in the days' time zone.
/// Monthly and range reports take a month's roll-up (`MonthRollup`) instead of its days while it sums exactly the
/// stored days, so a year decodes about a dozen roll-ups and the days of its first and last month.
struct StoredReports: ReportSource {
    let stores: AppGroupStores
    /// The group holding the days, and its day entries and roll-ups, read in one go (a year is one query, not 366).
    let group: String?
    let storedDays: [LocalDay: StoredEntry]
    let rollups: [LocalMonth: StoredEntry]
    let timeZone: TimeZone

    /// Finds the group holding `reports.day.*` keys: the one named, else the only one that has any.
    init(stores: AppGroupStores, group name: String?) throws {
        self.stores = stores
        var holders: [(group: String, days: [LocalDay: StoredEntry], rollups: [LocalMonth: StoredEntry])] = []
        for group in try stores.groups(named: name) {
            var days: [LocalDay: StoredEntry] = [:], rollups: [LocalMonth: StoredEntry] = [:]
            for (key, entry) in try stores.open(group).dictionaryRepresentation() {
                if let day = StoredDayKey.day(ofKey: key) {
                    days[day] = entry
                } else if let month = StoredDayKey.month(ofKey: key) {
                    rollups[month] = entry
                }
            }
            if !days.isEmpty || name != nil { holders.append((group, days, rollups)) }
        }
        guard holders.count <= 1 else {
            throw CommandFailure("the app groups \(holders.map(\.group).joined(separator: ", ")) all hold report days; choose one with --group")
        }
        group = holders.first?.group
        storedDays = holders.first?.days ?? [:]
        rollups = holders.first?.rollups ?? [:]
        // The days carry their zone; without any day, this machine's zone (every number is zero anyway).
        if let latest = storedDays.keys.max(), let entry = storedDays[latest] {
            let identifier = try Self.usage(entry, group: group).timeZoneIdentifier
            guard let zone = TimeZone(identifier: identifier) else { throw UsageLedgerError.unknownTimeZone(identifier) }
            timeZone = zone
        } else {
            timeZone = .current
        }
    }

    var origin: String {
        guard let group else {
            return stores.olderLayoutHint ?? "read the store in \(stores.container.rootPath): no report builder has stored a day there yet (no broker asked)"
        }
        return "read the report builder's days in app group \(group) in \(stores.container.rootPath) (no broker asked; "
            + "the use in progress is not included — --runtime-dir asks a running broker)"
    }

    func daily(_ day: LocalDay?) throws -> DailyReport {
        let ledger = try self.ledger(endingOn: day)
        return ledger.dailyReport(for: ledger.dateInterval(of: day ?? today(ledger)).start)
    }

    func weekly(_ day: LocalDay?) throws -> WeeklyReport {
        let ledger = try self.ledger(endingOn: day)
        return ledger.weeklyReport(endingOn: ledger.dateInterval(of: day ?? today(ledger)).start)
    }

    func monthly(_ month: LocalMonth?) throws -> RangeReport {
        let month = month ?? LocalMonth(containing: today(UsageLedger(timeZone: timeZone)))
        return try report(from: month.firstDay, to: month.lastDay, context: .monthly)
    }

    func range(from: LocalDay, to: LocalDay) throws -> RangeReport {
        try report(from: from, to: to, context: .range)
    }

    /// A monthly or range report: each whole month from its roll-up when that sums the stored days, else from its days.
    private func report(from: LocalDay, to: LocalDay, context: ReportContext) throws -> RangeReport {
        try UsageLedger(timeZone: timeZone).rangeReport(from: from, to: to, context: context) { part in
            if let rollup = rollup(covering: part) { return rollup.totals }
            return UsageTotals(try ledger(part).days)
        }
    }

    /// The roll-up of the month `part` is, when `part` is a whole month and the roll-up sums exactly its stored days.
    /// A roll-up that does not decode is passed over: the days it would sum are read instead, and they decide.
    private func rollup(covering part: ClosedRange<LocalDay>) -> MonthRollup? {
        let month = LocalMonth(containing: part.lowerBound)
        guard part == month.firstDay...month.lastDay, let entry = rollups[month],
              let rollup = try? entry.value(MonthRollup.self) else { return nil }
        let stored = storedDays.filter { part.contains($0.key) }.mapValues(\.version)
        return rollup.sums(stored, timeZoneIdentifier: timeZone.identifier) ? rollup : nil
    }

    /// The device's today as the store knows it: its last day with use (a played day is the device's date, not this
    /// machine's), else today on this machine's clock.
    private func today(_ ledger: UsageLedger) -> LocalDay { storedDays.keys.max() ?? ledger.day(containing: Date()) }

    /// A ledger with the stored days a daily or weekly report ending on `day` looks at (its week of insights).
    private func ledger(endingOn day: LocalDay?) throws -> UsageLedger {
        let last = day ?? today(UsageLedger(timeZone: timeZone))
        return try ledger(last.adding(days: -6)...last)
    }

    /// A ledger with the stored days of `run`.
    private func ledger(_ run: ClosedRange<LocalDay>) throws -> UsageLedger {
        var ledger = UsageLedger(timeZone: timeZone)
        for (day, entry) in storedDays where run.contains(day) {
            do {
                try ledger.restore(try Self.usage(entry, group: group))
            } catch let error as CommandFailure {
                throw error
            } catch {
                throw CommandFailure("\(entry.key) in app group \(group ?? "?") cannot be used: \(error)")
            }
        }
        return ledger
    }

    private static func usage(_ entry: StoredEntry, group: String?) throws -> DayUsage {
        do {
            return try entry.value(DayUsage.self)
        } catch {
            throw CommandFailure("\(entry.key) in app group \(group ?? "?") is not a stored day: \(error)")
        }
    }
}
