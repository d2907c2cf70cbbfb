// BedtimeKit: what Bedtime's app and extensions share — the night, the pass, the App Group's keys, the activities' names.
import DeviceActivity
import Foundation
import MonitorKit
import ShieldBusSDK

/// What the product's extensions and app agree on (each extension is its own process; this is their shared framework).
public enum Bedtime {
    public static let product = MonitoredProduct(name: "bedtime", group: "group.dev.shieldbus.bedtime")
    public static let night = WallClockWindow(start: ClockTime("22:30")!, end: ClockTime("06:30")!)
    public static let windDown = ClockTime("22:15")!
    public static let passMinutes = 5
    public static let passesPerNight = 2
    /// The seeded flaw of the naive twin (Config/naive-bedtime.yml), if any.
    public static var flaw: String { PluginEnvironment["BEDTIME_FLAW"] ?? "" }

    // The app's slice: the pick (`product.selectionKey`) and "skip tonight".
    public static let skipKey = "skip.at"
    // The action's slice.
    public static let passUntilKey = "pass.until"
    public static let passAppKey = "pass.app"
    public static func passCountKey(night: Date) -> String { "pass.count.\(Int(night.timeIntervalSince1970))" }
    // The monitor's slice: `monitor.*` (the check chain, the passes, the last wind-down).
    public static let windDownPostedKey = "monitor.windDownPosted"

    /// The night as a repeating schedule: its callbacks are one more path to a check (far schedules may fire late or never).
    public static let nightly = DeviceActivityName("bedtime.night")

    public static var now: Date { BusClock.absoluteNow }
}
