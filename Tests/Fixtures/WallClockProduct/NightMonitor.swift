// A night focus window (22:00–06:00, the selection shielded) kept by chained checks, written twice: once as iOS code
// is written, with `Date()` and `Calendar.current`, once with ShieldBus's bus time. Run on the same days, the two
// must give the same journal: that is what "the system clock is the device's" promises.
import DeviceActivity
import FamilyControls
import Foundation
import ManagedSettings
import ShieldBusSDK

/// Where a monitor reads the time and the calendar.
protocol DeviceTime {
    var now: Date { get }
    var calendar: Calendar { get }
}

/// As iOS code reads them.
struct SystemTime: DeviceTime {
    var now: Date { Date() }
    var calendar: Calendar { Calendar.current }
}

/// As ShieldBus's own API gives them.
struct BusTime: DeviceTime {
    var now: Date { BusClock.now }
    var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = BusClock.timeZone
        return calendar
    }
}

class NightMonitor: DeviceActivityMonitor {
    static let group = "group.com.example.night"
    static let names = [DeviceActivityName("check-a"), DeviceActivityName("check-b")]
    let time: DeviceTime

    init(time: DeviceTime) {
        self.time = time
    }

    override func intervalDidStart(for activity: DeviceActivityName) {
        guard let index = Self.names.firstIndex(of: activity) else { return }
        let now = time.now, calendar = time.calendar
        let clock = calendar.dateComponents([.hour, .minute], from: now)
        let minutes = clock.hour! * 60 + clock.minute!
        let inWindow = minutes >= 22 * 60 || minutes < 6 * 60
        let store = ManagedSettingsStore(named: .init("night"))
        if inWindow {
            if let data = UserDefaults(suiteName: Self.group)?.data(forKey: "selection"),
               let selection = try? JSONDecoder().decode(FamilyActivitySelection.self, from: data) {
                store.shield.applications = selection.applicationTokens
            }
        } else {
            store.shield.applications = nil
        }
        // The next check: the next window edge, or 40 minutes on, whichever is sooner (iOS is unreliable further out).
        let edges = [22, 6].compactMap { hour in
            calendar.nextDate(after: now, matching: DateComponents(hour: hour, minute: 0), matchingPolicy: .nextTime)
        }
        var next = (edges + [now.addingTimeInterval(40 * 60)]).min()!
        let parts: Set<Calendar.Component> = [.year, .month, .day, .hour, .minute]
        // A wall time in a repeated hour names its first pass, already gone: the OS refuses it. Half an hour on, then.
        for _ in 0..<4 {
            let schedule = DeviceActivitySchedule(intervalStart: calendar.dateComponents(parts, from: next),
                                                  intervalEnd: calendar.dateComponents(parts, from: next.addingTimeInterval(15 * 60)),
                                                  repeats: false)
            do {
                try DeviceActivityCenter().startMonitoring(Self.names[1 - index], during: schedule)
                return
            } catch {
                PluginRuntime.current?.logger.notice("the next check at \(next) is refused (\(error)); half an hour later")
                next = next.addingTimeInterval(30 * 60)
            }
        }
    }
}

final class SystemTimeNightMonitor: NightMonitor {
    init() { super.init(time: SystemTime()) }
}

final class BusTimeNightMonitor: NightMonitor {
    init() { super.init(time: BusTime()) }
}

/// The app: authorization, the pick kept in the App Group, and the first check now.
final class NightApp: App {
    override func didStart() {
        do {
            try AuthorizationCenter.shared.requestAuthorization(for: .individual)
            let selection = try AuthorizationCenter.shared.pickActivities()
            UserDefaults(suiteName: NightMonitor.group)?.set(try JSONEncoder().encode(selection), forKey: "selection")
            let now = BusClock.now
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = BusClock.timeZone
            let parts: Set<Calendar.Component> = [.year, .month, .day, .hour, .minute, .second]
            try DeviceActivityCenter().startMonitoring(NightMonitor.names[0], during: DeviceActivitySchedule(
                intervalStart: calendar.dateComponents(parts, from: now),
                intervalEnd: calendar.dateComponents(parts, from: now.addingTimeInterval(15 * 60)), repeats: false))
        } catch {
            PluginRuntime.current?.logger.error("cannot set up: \(error)")
        }
    }
}
