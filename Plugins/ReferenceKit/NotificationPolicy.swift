import Foundation
import ShieldBusSDK

/// Decides whether a notification goes out now: quiet hours first, then at most one of a kind per window.
public struct NotificationPolicy {
    /// Why a notification was not posted.
    public enum Suppression: String, Equatable {
        case quietHours = "quiet-hours"
        case duplicate
    }

    public let quietHours: QuietHours?
    public let dedupWindow: TimeInterval
    public let timeZone: TimeZone

    public init(quietHours: QuietHours?, dedupWindow: TimeInterval, timeZone: TimeZone) {
        self.quietHours = quietHours
        self.dedupWindow = dedupWindow
        self.timeZone = timeZone
    }

    /// Nil when the notification may be posted at `now`, given when the last one of its kind was; else why not.
    public func suppression(of level: NotificationRequest.InterruptionLevel, at now: Date, lastOfKind: Date?) -> Suppression? {
        if let quietHours, quietHours.contains(ClockTime(of: now, in: timeZone)),
           !(level == .timeSensitive && quietHours.allowTimeSensitive) {
            return .quietHours
        }
        if let lastOfKind, now.timeIntervalSince(lastOfKind) < dedupWindow {
            return .duplicate
        }
        return nil
    }
}
