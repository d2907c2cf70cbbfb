// DeviceAPI: the topics and message bodies through which plugins talk to the simulated device OS.
//
// It layers Screen Time's calls (FamilyControls, ManagedSettings, DeviceActivity, shields, notifications)
// on the bus protocol: every call is a `.request` topic answered by a `.reply`, every OS happening an event.
// Both the broker's device OS and the plugin SDK speak it; see docs/protocol.md.

import BusProtocol
import Foundation
import SortedJSON
import ScreenTime

/// The topics of the device API.
public enum DeviceTopic {
    // Activity on the device (the OS publishes these).
    public static let appOpened = "activity.app.opened"
    public static let appClosed = "activity.app.closed"
    public static let webVisited = "activity.web.visited"
    public static let webLeft = "activity.web.left"
    public static let home = "activity.home"
    public static let habitCompleted = "activity.habit.completed"
    /// The person used one of a product app's own controls (`AppAction`).
    public static let appAction = "activity.app.action"

    // Shields.
    public static let configurationRequest = "shield.configuration.request"
    public static let configurationReply = "shield.configuration.reply"
    public static let actionRequest = "shield.action.request"
    public static let actionReply = "shield.action.reply"
    public static let shieldShown = "shield.shown"
    public static let shieldDismissed = "shield.dismissed"
    public static let actionHandled = "shield.action.handled"

    // ManagedSettings.
    public static let settingsReadRequest = "managedsettings.read.request"
    public static let settingsReadReply = "managedsettings.read.reply"
    public static let settingsWriteRequest = "managedsettings.write.request"
    public static let settingsWriteReply = "managedsettings.write.reply"
    public static let settingsChanged = "managedsettings.changed"

    // DeviceActivity.
    public static let startMonitoringRequest = "deviceactivity.start-monitoring.request"
    public static let startMonitoringReply = "deviceactivity.start-monitoring.reply"
    public static let stopMonitoringRequest = "deviceactivity.stop-monitoring.request"
    public static let stopMonitoringReply = "deviceactivity.stop-monitoring.reply"
    public static let activitiesRequest = "deviceactivity.activities.request"
    public static let activitiesReply = "deviceactivity.activities.reply"
    public static let eventsRequest = "deviceactivity.events.request"
    public static let eventsReply = "deviceactivity.events.reply"
    public static let intervalDidStart = "deviceactivity.interval-did-start"
    public static let intervalDidEnd = "deviceactivity.interval-did-end"
    public static let intervalWillStartWarning = "deviceactivity.interval-will-start-warning"
    public static let intervalWillEndWarning = "deviceactivity.interval-will-end-warning"
    public static let eventDidReachThreshold = "deviceactivity.event-did-reach-threshold"
    public static let eventWillReachThresholdWarning = "deviceactivity.event-will-reach-threshold-warning"
    /// A scheduled callback the OS dropped (the ios-realistic profile's unreliable far schedules).
    public static let callbackDropped = "deviceactivity.callback-dropped"

    // FamilyControls.
    public static let authorizationRequest = "familycontrols.authorization.request"
    public static let authorizationReply = "familycontrols.authorization.reply"
    public static let authorizationChanged = "familycontrols.authorization.changed"
    public static let pickerRequest = "familycontrols.picker.request"
    public static let pickerReply = "familycontrols.picker.reply"

    // The app's own lifecycle (sent to the companion app).
    public static let willEnterForeground = "app.lifecycle.will-enter-foreground"
    public static let didEnterBackground = "app.lifecycle.did-enter-background"
    public static let timerRequest = "app.timer.request"
    public static let timerReply = "app.timer.reply"
    public static let timerFired = "app.timer.fired"
    public static let openURLRequest = "app.open-url.request"
    public static let openURLReply = "app.open-url.reply"
    public static let urlOpened = "app.url.opened"

    // Notifications.
    public static let notificationPostRequest = "notification.post.request"
    public static let notificationPostReply = "notification.post.reply"
    public static let notificationPosted = "notification.posted"
    public static let notificationTapped = "notification.tapped"

    // The device itself.
    /// Every whole minute of bus time `{local}`, while a plugin subscribes to it.
    public static let clockTick = "clock.tick"
    /// Every local midnight (bus time, the time zone in force) `{local}`: what a plugin that only needs the day
    /// boundary subscribes to, instead of 1,440 ticks a day (Apple's `NSCalendarDayChanged`).
    public static let dayChanged = "clock.day-changed"
    public static let osUpdated = "device.os-updated"
    public static let restarted = "device.restarted"
    /// The person set the device's wall clock: `{offsetMs}`, device clock minus bus time from now on.
    public static let clockChanged = "device.clock-changed"
    /// The device's time zone changed: `{timeZone}`, the IANA zone in force from now on.
    public static let timeZoneChanged = "device.time-zone-changed"
    public static let scenarioStep = "scenario.step"
    /// A tool looks at the phone (`DeviceLook`): read-only, for clients that came after the events that set it up.
    public static let lookRequest = "input.look.request"
    public static let lookReply = "input.look.reply"
    public static let scenarioEnded = "scenario.ended"
}

/// Encoders and decoders for device API bodies: sorted keys (deterministic bytes) and times as integer
/// milliseconds since the Unix epoch, like bus time.
public enum DeviceAPICoding {
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            return Date(timeIntervalSince1970: Double(try container.decode(Int64.self)) / 1000)
        }
        return decoder
    }

    /// Encodes a body to compact JSON bytes: `JSONEncoder`'s bytes with sorted keys and unescaped slashes, dates as
    /// integer milliseconds, written by `SortedJSONEncoder` (a hot path: every event the OS emits).
    public static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        // Encoding our own Codable types cannot fail: they have no invalid states (no NaN or infinite doubles).
        try! SortedJSONEncoder(dates: .millisecondsSince1970).encode(value)
    }

    /// A decoding error in words: the path to the bad field and what was wrong with it.
    public static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing '\((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context), DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return (path.isEmpty ? "" : "at '\(path)': ") + context.debugDescription
        default:
            return "\(error)"
        }
    }

    /// Decodes a body (or an options file). A key written twice in one object is refused first, as the bus's reader
    /// refuses it: `JSONDecoder` would keep the first, where a reader that keeps the last would read other values.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try JSONParser.check(bytes)
        return try decoder().decode(type, from: Data(bytes))
    }
}

/// A bus time as a `Date`.
public func date(busTime: Int64) -> Date { Date(timeIntervalSince1970: Double(busTime) / 1000) }

/// A `Date` as bus time.
public func busTime(_ date: Date) -> Int64 { SortedJSONEncoder.milliseconds(since1970: date) }
