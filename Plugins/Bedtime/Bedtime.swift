import DeviceActivity
import FamilyControls
import Foundation
import MonitorKit
import ShieldBusSDK

/// What the product's extensions and app agree on: the night, the pass, the App Group's keys, the activities' names.
enum Bedtime {
    static let group = "group.dev.shieldbus.bedtime"
    static let store = "bedtime"
    static let night = WallClockWindow(start: ClockTime("22:30")!, end: ClockTime("06:30")!)
    static let windDown = ClockTime("22:15")!
    static let passMinutes = 5
    static let passesPerNight = 2
    /// The seeded flaw of the naive twin (Config/naive-bedtime.yml), if any.
    static let flaw = ProcessInfo.processInfo.environment["BEDTIME_FLAW"] ?? ""

    // The app's slice.
    static let selectionKey = "selection"
    static let skipKey = "skip.at"
    // The action's slice.
    static let passUntilKey = "pass.until"
    static let passAppKey = "pass.app"
    static func passCountKey(night: Date) -> String { "pass.count.\(Int(night.timeIntervalSince1970))" }
    // The monitor's slice: `monitor.*` (the check chain, the passes, the last wind-down).
    static let windDownPostedKey = "monitor.windDownPosted"

    static let kept = KeptSelection(activity: DeviceActivityName("bedtime.selection"), event: DeviceActivityEvent.Name("bedtime.selection"))
    /// The night as a repeating schedule: its callbacks are one more path to a check (far schedules may fire late or never).
    static let nightly = DeviceActivityName("bedtime.night")
    /// A one-off window starting now: the app wakes the monitor with it.
    static let wake = DeviceActivityName("bedtime.wake")
    static let reserve = DeviceActivityName("bedtime.reserve")

    static var now: Date { BusClock.absoluteNow }

    /// The product's App Group, as this plugin may write it (its slice); nil, logged, when it cannot be opened.
    static func defaults() -> SharedDefaults? {
        do {
            return try SharedDefaults.forPlugin(suiteName: group)
        } catch {
            PluginRuntime.current?.logger.error("cannot open \(group): \(error)")
            return nil
        }
    }

    /// The selection the app saved, with the OS's current copy of it (the saved tokens go stale at an iOS update).
    static func selection(_ defaults: SharedDefaults) -> BlockList {
        let saved = ((try? defaults.value(FamilyActivitySelection.self, forKey: selectionKey)) ?? nil).map(BlockList.init) ?? BlockList()
        return kept.current(saved, center: DeviceActivityCenter())
    }
}
