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
struct ReportBuilderOptions: Decodable, AppGroupOptions {
    let appGroup: String
    let retentionDays: Int

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case appGroup, retentionDays
    }

    init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: CodingKeys.allCases.map(\.rawValue), in: "the report builder's options")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let appGroup = try container.decodeIfPresent(String.self, forKey: .appGroup), !appGroup.isEmpty else {
            throw PluginOptionsError.invalid(key: "appGroup", problem: "the report builder needs an app group (with the slice reports.*) to keep its days in")
        }
        self.appGroup = appGroup
        retentionDays = try container.decodeIfPresent(Int.self, forKey: .retentionDays) ?? 35
        guard retentionDays >= 7 else {
            throw PluginOptionsError.invalid(key: "retentionDays", problem: "must be at least 7 (a weekly report covers 7 days), got \(retentionDays)")
        }
    }
}
