import DeviceActivity
import Foundation
import MonitorKit
import ShieldBusSDK

/// What the product's extensions and app agree on: the night, the pass, the App Group's keys, the activities' names.
enum Bedtime {
    static let product = MonitoredProduct(name: "bedtime", group: "group.dev.shieldbus.bedtime")
    static let night = WallClockWindow(start: ClockTime("22:30")!, end: ClockTime("06:30")!)
    static let windDown = ClockTime("22:15")!
    static let passMinutes = 5
    static let passesPerNight = 2
    /// The seeded flaw of the naive twin (Config/naive-bedtime.yml), if any.
    static let flaw = ProcessInfo.processInfo.environment["BEDTIME_FLAW"] ?? ""

    // The app's slice: the pick (`product.selectionKey`) and "skip tonight".
    static let skipKey = "skip.at"
    // The action's slice.
    static let passUntilKey = "pass.until"
    static let passAppKey = "pass.app"
    static func passCountKey(night: Date) -> String { "pass.count.\(Int(night.timeIntervalSince1970))" }
    // The monitor's slice: `monitor.*` (the check chain, the passes, the last wind-down).
    static let windDownPostedKey = "monitor.windDownPosted"

    /// The night as a repeating schedule: its callbacks are one more path to a check (far schedules may fire late or never).
    static let nightly = DeviceActivityName("bedtime.night")

    static var now: Date { BusClock.absoluteNow }
}
