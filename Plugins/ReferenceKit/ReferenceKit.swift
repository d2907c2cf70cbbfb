// ReferenceKit: what the reference plugins share — the App-Group schema they agree on, and their common logic.

import Foundation
@_exported import MonitorKit
import ShieldBusSDK

/// A deep link the notifier leaves for the companion app (the Tether write-up's `PendingDeepLinkRoute`):
/// an extension cannot open URLs, so it writes the route and the app opens it when the person taps the
/// notification and the app comes to the foreground.
public struct PendingDeepLinkRoute: Codable, Hashable {
    /// The route's name, e.g. `circle_contacts`.
    public var route: String
    /// The URL the route maps to in the notifier's route table, e.g. `tether://nudge?action=call`.
    public var url: String
    /// When it was written (bus time).
    public var createdAt: Date
    /// After this it is dropped, not followed.
    public var expiresAt: Date

    public init(route: String, url: String, createdAt: Date, expiresAt: Date) {
        self.route = route
        self.url = url
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// The App-Group key it is stored under.
    public static let key = "PendingDeepLinkRoute"
}

/// What the shield action delegate announces when the person takes a grace pass or accepts a nudge; the report
/// builder counts them. Bodies are free (e.g. `{"target": "Instagram"}`).
public enum IntentTopic {
    public static let gracePass = "app.intent.grace-pass"
    public static let nudge = "app.intent.nudge"
}

/// The report builder's topics: what it publishes at local midnight, and the requests it answers.
public enum ReportTopic {
    /// The finished day's `DailyReport`.
    public static let daily = "report.daily"
    /// `{"day": "YYYY-MM-DD", "insights": Insights}` for the finished day.
    public static let insight = "report.insight"
    /// `{"date": "YYYY-MM-DD"}` (optional; default today) → `{"ok": true, "value": DailyReport}`.
    public static let dailyRequest = "report.daily.request"
    /// `{"date": "YYYY-MM-DD"}`: the 7 days ending on it → `{"ok": true, "value": WeeklyReport}`.
    public static let weeklyRequest = "report.weekly.request"
    /// `{"month": "YYYY-MM"}` (optional; default this month) → `{"ok": true, "value": RangeReport}`.
    public static let monthlyRequest = "report.monthly.request"
    /// `{"from": "YYYY-MM-DD", "to": "YYYY-MM-DD"}`, both included → `{"ok": true, "value": RangeReport}`.
    public static let rangeRequest = "report.range.request"
}
