// UsageReports: the pure core of ShieldBus's report builder — usage aggregation, daily/weekly reports, insights and renderers.
import Foundation

/// The kind of report, named like the `DeviceActivityReport.Context` values that a
/// report extension declares in `DeviceActivityReportExtensionCategories`.
public enum ReportContext: String, Codable, Hashable, Sendable, CaseIterable {
    /// One local calendar day.
    case daily
    /// Seven local calendar days ending on the report date.
    case weekly
    /// One local calendar month.
    case monthly
    /// Any run of local calendar days, first and last included.
    case range
}
