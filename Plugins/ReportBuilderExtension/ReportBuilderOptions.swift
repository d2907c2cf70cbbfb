import Foundation
import ReferenceKit
import ShieldBusSDK

/// The report builder's options: the configuration's `plugins[].options` for the `report` plugin.
///
/// ```yaml
/// options:
///   appGroup: group.dev.shieldbus.speedbump   # where the per-day aggregates live (its slice: reports.*)
///   retentionDays: 35                         # days kept (default 35; at least 7, for the weekly report)
/// ```
///
/// Read from the options' JSON without `Codable` (`JSONReadableOptions`), as the other plugins read theirs: the
/// report builder reads them at every launch.
struct ReportBuilderOptions: JSONReadableOptions, AppGroupOptions {
    let appGroup: String
    let retentionDays: Int

    /// The keys the options may have (the configuration checks the same: `ReferencePluginOptions.reportBuilder`).
    enum Key: String, CaseIterable {
        case appGroup, retentionDays
    }

    init(json: JSONValue) throws {
        let options = try OptionsObject(json, in: "the report builder's options", allowed: Key.allCases.map(\.rawValue))
        guard let appGroup = try options.string(Key.appGroup.rawValue), !appGroup.isEmpty else {
            throw PluginOptionsError.invalid(key: "appGroup", problem: "the report builder needs an app group (with the slice reports.*) to keep its days in")
        }
        self.appGroup = appGroup
        retentionDays = try options.int(Key.retentionDays.rawValue) ?? 35
        guard retentionDays >= 7 else {
            throw PluginOptionsError.invalid(key: "retentionDays", problem: "must be at least 7 (a weekly report covers 7 days), got \(retentionDays)")
        }
    }
}
