import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

/// The companion app — the main app of the product: it comes to the foreground and goes to the background,
/// may open URLs (extensions may not), has timers that stop while it is suspended, and hears what the
/// person does (habits completed, the app's own controls used, notifications tapped).
open class App: BusComponent {
    public init() {}
    public var role: Role { .app }
    /// App-Group changes (`state.changed`) are not among them: an app that reacts to them subscribes (each costs it a turn).
    open var subscriptions: [String] { ["app.", "activity.habit.", DeviceTopic.appAction, "notification.tapped", "familycontrols.authorization.changed"] }
    /// The App-Group keys whose changes it hears, by group, when it subscribes to `state.changed`; nil: every change.
    open var watchedStateKeys: [String: [String]]? { nil }

    /// Called once when the app's process starts (also after a force-quit or a device restart).
    open func didStart() {}
    /// The app is about to be on screen.
    open func willEnterForeground() {}
    /// The app left the screen.
    open func didEnterBackground() {}
    /// An app timer fired.
    open func timerFired(_ id: String) {}
    /// The person completed a habit.
    open func habitCompleted(_ habit: String) {}
    /// The person used one of the app's own controls ("skip tonight"): on iOS, a button in the app's view.
    open func actionTapped(_ action: String) {}
    /// Any other subscribed event.
    open func handleOther(_ envelope: Envelope) {}

    public func handle(_ envelope: Envelope) {
        switch envelope.topic {
        case DeviceTopic.willEnterForeground: willEnterForeground()
        case DeviceTopic.didEnterBackground: didEnterBackground()
        case DeviceTopic.timerFired:
            if let fired = try? DeviceAPICoding.decode(AppTimerFired.self, from: envelope.body) { timerFired(fired.id) }
        case DeviceTopic.habitCompleted:
            if let habit = try? DeviceAPICoding.decode(HabitCompleted.self, from: envelope.body) { habitCompleted(habit.habit) }
        case DeviceTopic.appAction:
            if let tapped = try? DeviceAPICoding.decode(AppAction.self, from: envelope.body) { actionTapped(tapped.action) }
        default: handleOther(envelope)
        }
    }

    // MARK: What an app can do

    /// Opens a URL (UIApplication.open). Only the app can, and only in the foreground.
    public func open(_ url: String) throws {
        _ = try runtime().call(DeviceTopic.openURLRequest, OpenURL(url: url), expecting: NoValue.self)
    }

    /// Schedules an app timer at a bus time. Under the ios-realistic profile it does not fire while the app
    /// is in the background — the reason a flag set by a timer goes stale (the Habit Doom write-up, lesson 6).
    public func scheduleTimer(id: String, at date: Date) throws {
        _ = try runtime().call(DeviceTopic.timerRequest, AppTimerRequest(id: id, fireAt: date), expecting: NoValue.self)
    }

    /// An async task's suspension point: returns at once in the foreground; under the ios-realistic profile a
    /// backgrounded app's task stops here until the app returns (the write-up's lesson 9).
    public func suspensionPoint() throws {
        let runtime = try runtime()
        let previous = runtime.callTimeoutMilliseconds
        runtime.callTimeoutMilliseconds = 500
        defer { runtime.callTimeoutMilliseconds = previous }
        _ = try runtime.call("app.yield.request", NoValue(), expecting: NoValue.self)
    }
}

/// Opening a URL from an extension fails as on iOS (the Tether write-up): use a pending route instead.
public func openURLFromExtension(_ url: String) throws {
    throw PluginError.unavailableInExtension("UIApplication.shared.open(\(url)): \(NSExtensionContext.lesson)")
}

/// Posting notifications through the OS, from any plugin (the `UserNotifications` module has the iOS-shaped API).
public enum Notifications {
    public static func post(_ request: NotificationRequest) throws {
        _ = try runtime().call(DeviceTopic.notificationPostRequest, request, expecting: NoValue.self)
    }
}

/// The clock, as a plugin sees it.
public enum BusClock {
    /// The device's wall clock now — what `Date()` shows on a phone: the time of the event being handled, moved
    /// by whatever the person set the device clock to (`device.clock-changed`). Equal to bus time until then.
    public static var now: Date { PluginRuntime.current?.deviceClockNow ?? Date(timeIntervalSince1970: 0) }
    /// The time zone in force on the device.
    public static var timeZone: TimeZone { PluginRuntime.current?.timeZone ?? TimeZone(identifier: "UTC")! }
    /// True time: the device clock less the offset the person set it by. The OS announces every change
    /// (`device.clock-changed {offsetMs}`, as iOS posts its significant-time-change notification), so a product
    /// that tracks the offset computes expiries and days that setting the clock cannot move.
    public static var absoluteNow: Date { now.addingTimeInterval(-clockOffset) }
    /// How far the person set the device clock from true time, in seconds (0 until they do).
    public static var clockOffset: TimeInterval { PluginRuntime.current?.clockOffset ?? 0 }
    /// What the device clock shows at the true instant `date`: the OS runs wall-clock schedules on the device clock.
    public static func deviceClock(at date: Date) -> Date { date.addingTimeInterval(clockOffset) }
}
