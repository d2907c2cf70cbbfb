// fixture-alternate-days: a product whose promise the rule language cannot say — the picked apps rest every other day
// (local days of even number since 1970, in the zone in force) — for the escape hatch's test: a promise model judges
// it (alternate-days-model). ALTERNATE_DAYS_FLAW=utc-days seeds a flaw: the monitor counts days in UTC.
import DeviceActivity
import Foundation
import MonitorKit
import ShieldBusSDK

enum AlternateDays {
    static let product = MonitoredProduct(name: "alternate", group: "group.com.example.alternate")
    static let countsUTCDays = ProcessInfo.processInfo.environment["ALTERNATE_DAYS_FLAW"] == "utc-days"

    /// The calendar of the day count: the zone in force (or UTC, with the flaw).
    static var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = countsUTCDays ? TimeZone(identifier: "UTC")! : BusClock.timeZone
        return calendar
    }

    /// Whether `date` falls on a rest day: its local date's day number since 1970-01-01 is even.
    static func isRestDay(_ date: Date) -> Bool {
        let local = calendar.dateComponents([.year, .month, .day], from: date)
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let day = Int(utc.date(from: local)!.timeIntervalSince1970 / 86_400)
        return day % 2 == 0
    }
}

/// Shields the pick on rest days, lifts it on the others, and checks again at the next local midnight.
final class AlternateDaysMonitor: ChainedMonitor {
    init() { super.init(product: AlternateDays.product) }

    override func decide(at now: Date, defaults: SharedDefaults, zones: ZoneReading) throws -> Date {
        if AlternateDays.isRestDay(now) {
            try shields.block(product.selection(defaults))
        } else if try shields.isBlocking() {
            try shields.liftAll()
        }
        let calendar = AlternateDays.calendar
        return calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: now)) ?? now.addingTimeInterval(CheckChain.horizon)
    }
}

/// The app: authorization, the pick, the reserve slot, a wake-up — at every start and after an approval.
final class AlternateDaysApp: MonitoredProductApp {
    init() {
        super.init(product: AlternateDays.product)
    }
}

PluginHost.run(principalClasses: ["AlternateDaysMonitor": AlternateDaysMonitor.init, "AlternateDaysApp": AlternateDaysApp.init])
