import Foundation

/// Short human durations, as Screen Time shows them: "1h 05m", "45m", "<1m", "0m".
enum DurationText {
    /// Whole minutes, rounded down (a report never claims more time than was used).
    static func short(_ seconds: TimeInterval) -> String {
        guard seconds >= 60 else { return seconds > 0 ? "<1m" : "0m" }
        let minutes = Int(seconds / 60)
        let hours = minutes / 60
        return hours > 0 ? "\(hours)h \(TwoDigits.pad(minutes % 60))m" : "\(minutes)m"
    }
}
