import Foundation

extension UsageLedger {
    /// The number of days a report's insights look at.
    static let insightPeriodDays = 7

    /// The daily report of the local day containing `date`.
    public func dailyReport(for date: Date) -> DailyReport {
        let day = self.day(containing: date)
        let usage = self.usage(on: day) ?? DayUsage(day: day, timeZoneIdentifier: timeZone.identifier)
        let interval = dateInterval(of: day)
        return DailyReport(
            context: .daily,
            day: day,
            timeZoneIdentifier: timeZone.identifier,
            start: interval.start,
            end: interval.end,
            totalSeconds: usage.totalSeconds,
            apps: Ranking.apps([usage]),
            categories: Ranking.usage(usage.categorySeconds),
            webDomains: Ranking.usage(usage.webDomainSeconds),
            pickups: usage.totalPickups,
            pickupsByApp: Ranking.counts(usage.pickups),
            firstPickup: usage.firstPickup,
            notifications: usage.totalNotifications,
            notificationsBySource: Ranking.counts(usage.notifications),
            shieldEncounters: usage.totalShieldEncounters,
            shieldEncountersByTarget: Ranking.counts(usage.shieldEncounters),
            gracePassesUsed: usage.gracePassesUsed,
            nudgesUsed: usage.nudgesUsed,
            hourlySeconds: usage.hourlySeconds,
            insights: Insights(period: period(endingOn: day).map { self.usage(on: $0) })
        )
    }

    /// The weekly report of the 7 local days ending with the day containing `date`.
    public func weeklyReport(endingOn date: Date) -> WeeklyReport {
        let days = period(endingOn: self.day(containing: date))
        let usages = days.map { self.usage(on: $0) ?? DayUsage(day: $0, timeZoneIdentifier: timeZone.identifier) }
        let recorded = days.compactMap { self.usage(on: $0) }
        return WeeklyReport(
            context: .weekly,
            firstDay: days[0],
            lastDay: days[days.count - 1],
            timeZoneIdentifier: timeZone.identifier,
            start: dateInterval(of: days[0]).start,
            end: dateInterval(of: days[days.count - 1]).end,
            days: usages.map {
                WeeklyReport.Day(day: $0.day, weekday: $0.day.shortWeekdayName, totalSeconds: $0.totalSeconds,
                                 pickups: $0.totalPickups, gracePassesUsed: $0.gracePassesUsed)
            },
            totalSeconds: usages.map(\.totalSeconds).reduce(0, +),
            apps: Ranking.apps(recorded),
            categories: Ranking.usage(Ranking.sum(recorded.map(\.categorySeconds))),
            webDomains: Ranking.usage(Ranking.sum(recorded.map(\.webDomainSeconds))),
            hourByDay: usages.map(\.hourlySeconds),
            pickups: recorded.map(\.totalPickups).reduce(0, +),
            notifications: recorded.map(\.totalNotifications).reduce(0, +),
            shieldEncounters: recorded.map(\.totalShieldEncounters).reduce(0, +),
            gracePassesUsed: recorded.map(\.gracePassesUsed).reduce(0, +),
            nudgesUsed: recorded.map(\.nudgesUsed).reduce(0, +),
            insights: Insights(period: days.map { self.usage(on: $0) })
        )
    }

    /// The insight period ending on `last`, oldest first.
    private func period(endingOn last: LocalDay) -> [LocalDay] {
        (0..<Self.insightPeriodDays).map { last.adding(days: $0 + 1 - Self.insightPeriodDays) }
    }
}
