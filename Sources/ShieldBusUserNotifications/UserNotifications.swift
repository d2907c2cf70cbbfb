// ShieldBusUserNotifications, imported as `UserNotifications` (a module alias, Package.swift): as far as screen-time extensions use it: the notification centre, content, requests and
// triggers under Apple's names, posting through the device's notification centre (the notifier path). A request
// with a time or calendar trigger is refused with a clear error: the device posts at once and keeps no
// scheduled notifications (docs/porting-from-ios.md).
import DeviceAPI
import Foundation
import ShieldBusSDK

/// What a notification says (`UNNotificationContent`).
open class UNNotificationContent: @unchecked Sendable {
    public internal(set) var title = ""
    public internal(set) var subtitle = ""
    public internal(set) var body = ""
    public internal(set) var userInfo: [AnyHashable: Any] = [:]
    public internal(set) var categoryIdentifier = ""
    public internal(set) var threadIdentifier = ""
    public internal(set) var interruptionLevel: UNNotificationInterruptionLevel = .active
    public internal(set) var sound: UNNotificationSound?
    public init() {}
}

/// Content to fill in (`UNMutableNotificationContent`).
open class UNMutableNotificationContent: UNNotificationContent, @unchecked Sendable {
    public override var title: String { get { super.title } set { super.title = newValue } }
    public override var subtitle: String { get { super.subtitle } set { super.subtitle = newValue } }
    public override var body: String { get { super.body } set { super.body = newValue } }
    public override var userInfo: [AnyHashable: Any] { get { super.userInfo } set { super.userInfo = newValue } }
    public override var categoryIdentifier: String { get { super.categoryIdentifier } set { super.categoryIdentifier = newValue } }
    public override var threadIdentifier: String { get { super.threadIdentifier } set { super.threadIdentifier = newValue } }
    public override var interruptionLevel: UNNotificationInterruptionLevel { get { super.interruptionLevel } set { super.interruptionLevel = newValue } }
    public override var sound: UNNotificationSound? { get { super.sound } set { super.sound = newValue } }
    public override init() {}
}

/// A notification's sound (`UNNotificationSound`): the device plays none; kept for the API's shape.
public final class UNNotificationSound: Sendable {
    public static let `default` = UNNotificationSound()
    public static let defaultCritical = UNNotificationSound()
}

/// How insistently a notification interrupts (`UNNotificationInterruptionLevel`).
public enum UNNotificationInterruptionLevel: Sendable {
    case passive, active, timeSensitive, critical
}

/// When a notification is delivered (`UNNotificationTrigger`); nil delivers at once.
open class UNNotificationTrigger: @unchecked Sendable {
    public let repeats: Bool
    init(repeats: Bool) { self.repeats = repeats }
}

/// After a time interval (`UNTimeIntervalNotificationTrigger`).
public final class UNTimeIntervalNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    public let timeInterval: TimeInterval
    public init(timeInterval: TimeInterval, repeats: Bool) {
        self.timeInterval = timeInterval
        super.init(repeats: repeats)
    }
}

/// At matching date components (`UNCalendarNotificationTrigger`).
public final class UNCalendarNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    public let dateComponents: DateComponents
    public init(dateMatching dateComponents: DateComponents, repeats: Bool) {
        self.dateComponents = dateComponents
        super.init(repeats: repeats)
    }
}

/// A notification to deliver (`UNNotificationRequest`).
public final class UNNotificationRequest: @unchecked Sendable {
    public let identifier: String
    public let content: UNNotificationContent
    public let trigger: UNNotificationTrigger?
    public init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
    }
}

/// What the app may show (`UNAuthorizationOptions`).
public struct UNAuthorizationOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let badge = UNAuthorizationOptions(rawValue: 1)
    public static let sound = UNAuthorizationOptions(rawValue: 2)
    public static let alert = UNAuthorizationOptions(rawValue: 4)
    public static let provisional = UNAuthorizationOptions(rawValue: 64)
    public static let timeSensitive = UNAuthorizationOptions(rawValue: 256)
}

/// Why the centre refused a request (`UNError`).
public struct UNError: Error, CustomStringConvertible {
    public let description: String
}

/// The notification centre (`UNUserNotificationCenter`).
public final class UNUserNotificationCenter: @unchecked Sendable {
    private static let shared = UNUserNotificationCenter()
    public static func current() -> UNUserNotificationCenter { shared }

    /// Notifications are always allowed on ShieldBus's device.
    public func requestAuthorization(options: UNAuthorizationOptions = [], completionHandler: @escaping (Bool, Error?) -> Void) {
        completionHandler(true, nil)
    }

    public func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool { true }

    /// Posts `request` through the device's notification centre; the handler gets the refusal, if any (it is also
    /// reported on the bus when no handler is given).
    public func add(_ request: UNNotificationRequest, withCompletionHandler completionHandler: ((Error?) -> Void)? = nil) {
        do {
            try post(request)
            completionHandler?(nil)
        } catch {
            if let completionHandler { completionHandler(error) } else { SilentCall.reportFailure("UNUserNotificationCenter.add(\(request.identifier))", "\(error)") }
        }
    }

    public func add(_ request: UNNotificationRequest) async throws {
        try await PluginRuntime.onPluginThread { try self.post(request) }
    }

    /// The device keeps no pending notifications: nothing to remove.
    public func removePendingNotificationRequests(withIdentifiers identifiers: [String]) {}
    public func removeAllPendingNotificationRequests() {}
    public func removeDeliveredNotifications(withIdentifiers identifiers: [String]) {}
    public func removeAllDeliveredNotifications() {}

    private func post(_ request: UNNotificationRequest) throws {
        if let trigger = request.trigger, !(trigger is UNTimeIntervalNotificationTrigger && (trigger as! UNTimeIntervalNotificationTrigger).timeInterval <= 0) {
            throw UNError(description: "ShieldBus's device posts notifications at once and keeps none scheduled: post with a nil trigger, at the time it is due (a DeviceActivity schedule or an app timer calls you then)")
        }
        let content = request.content
        let level: NotificationRequest.InterruptionLevel
        switch content.interruptionLevel {
        case .passive: level = .passive
        case .active: level = .active
        case .timeSensitive, .critical: level = .timeSensitive
        }
        let body = content.subtitle.isEmpty ? content.body : content.subtitle + "\n" + content.body
        try Notifications.post(NotificationRequest(id: request.identifier, title: content.title, body: body, interruptionLevel: level,
                                                   kind: content.categoryIdentifier.isEmpty ? nil : content.categoryIdentifier))
    }
}
