import Foundation

/// Takeaways over a report's period (the 7 local days ending on the report date), with
/// the rules of the Device Activity Report write-up (seed 003).
public struct Insights: Codable, Hashable, Sendable {
    /// The direction of screen time over the last three days of the period.
    public enum Trend: String, Codable, Hashable, Sendable {
        /// The last day exceeds the first of the three by more than 20%.
        case increasing
        /// The first day exceeds the last of the three by more than 20%.
        case decreasing
        /// Neither.
        case stable

        /// The seed's rule: `last > first × 1.2` → increasing, `first > last × 1.2` →
        /// decreasing, else stable. Evaluated as `5·last > 6·first` so that exactly 20%
        /// more is stable without floating-point rounding deciding it.
        public init(firstDaySeconds first: TimeInterval, lastDaySeconds last: TimeInterval) {
            if last * 5 > first * 6 {
                self = .increasing
            } else if first * 5 > last * 6 {
                self = .decreasing
            } else {
                self = .stable
            }
        }
    }

    /// The app with the most foreground time over the period (ties: the smaller name);
    /// nil when no app was used.
    public let mostUsedApp: String?
    /// That app's seconds over the period.
    public let mostUsedAppSeconds: TimeInterval
    /// Screen time per day: the period's screen time divided by its 7 days, days without
    /// data counting as 0 — the Medium series' rule (seed 003: the week's total over the 7
    /// days it asked for), which the recommendation's 3-hour threshold is meant for.
    public let averageDailySeconds: TimeInterval
    /// How many days of the period have data (any record at all, even only a notification);
    /// shown beside the average, never its divisor.
    public let daysWithData: Int
    /// The trend over the last three days of the period (days without data count as 0).
    public let trend: Trend
    /// The recommendation text (see `recommendation(trend:averageDailySeconds:mostUsedApp:)`).
    public let recommendation: String
    /// Grace passes used on the day before the report date.
    public let yesterdayGracePasses: Int
    /// The morning message that reflects yesterday's grace passes back.
    public let morningMessage: String

    /// Average daily screen time above which the break recommendation is given (3 h).
    public static let breakThresholdSeconds: TimeInterval = 3 * 3600

    /// The seed's recommendation: a rising trend names the most used app; else more than
    /// 3 h a day on average asks for breaks; else praise.
    public static func recommendation(trend: Trend, averageDailySeconds: TimeInterval, mostUsedApp: String?) -> String {
        if trend == .increasing, let app = mostUsedApp {
            return "Your screen time is rising. Try limiting \(app)."
        }
        if averageDailySeconds > breakThresholdSeconds {
            return "Over 3h daily — schedule some breaks!"
        }
        return "Great job maintaining healthy habits!"
    }

    /// "Yesterday you used N grace passes." (singular for one), shown on the next morning.
    public static func morningMessage(gracePassesYesterday count: Int) -> String {
        "Yesterday you used \(count) grace \(count == 1 ? "pass" : "passes")."
    }

    /// Builds the insights of a period: `period` lists its days oldest first (the report
    /// date last), nil for a day without data.
    init(period: [DayUsage?]) {
        precondition(period.count >= 3, "a period has at least three days")
        let recorded = period.compactMap { $0 }
        let top = Ranking.apps(recorded).first
        mostUsedApp = top?.app
        mostUsedAppSeconds = top?.seconds ?? 0
        daysWithData = recorded.count
        averageDailySeconds = recorded.map(\.totalSeconds).reduce(0, +) / Double(period.count)
        let lastThree = period.suffix(3).map { $0?.totalSeconds ?? 0 }
        trend = Trend(firstDaySeconds: lastThree[0], lastDaySeconds: lastThree[2])
        recommendation = Self.recommendation(trend: trend, averageDailySeconds: averageDailySeconds, mostUsedApp: mostUsedApp)
        yesterdayGracePasses = period[period.count - 2]?.gracePassesUsed ?? 0
        morningMessage = Self.morningMessage(gracePassesYesterday: yesterdayGracePasses)
    }
}
