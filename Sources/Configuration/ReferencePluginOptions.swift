/// The options the reference plugins accept, by executable, so that a mistyped key is refused when the
/// configuration is loaded — with its file, line and a suggestion — instead of being ignored by a running plugin.
/// The plugins' option types decode the same keys (`ReferencePluginOptionsTests` keeps the two in step).
public enum ReferencePluginOptions {
    /// The four product plugins (`Plugins/ReferenceKit/ProductOptions.swift`).
    public static let product = ["product", "appGroup", "store", "habitsPerDay", "unlockMinutes", "focusHours", "passMinutes",
                                 "thresholdMinutes", "cooldownMinutes", "icon"]
    public static let notifier = ["appGroup", "rules", "routes", "routeLifetimeMinutes", "quietHours", "dedupMinutes", "desktop"]
    public static let notifierRule = ["on", "when", "kind", "title", "body", "interruptionLevel", "route"]
    public static let quietHours = ["start", "end", "allowTimeSensitive"]
    public static let reportBuilder = ["appGroup", "retentionDays"]

    /// Whether `executable` (a built product name or a path to one) is one of the reference plugins.
    static func isReferencePlugin(_ executable: String) -> Bool {
        ["activity-monitor", "shield-renderer", "action-delegate", "companion-app", "notifier", "report-builder"]
            .contains(executable.split(separator: "/").last.map(String.init) ?? executable)
    }

    /// Checks the options of a plugin run by `executable` (a built product name or a path to one), if it is a
    /// reference plugin; other plugins' options are theirs to check.
    static func check(_ options: YAMLValue, executable: String) throws {
        switch executable.split(separator: "/").last.map(String.init) ?? executable {
        case "activity-monitor", "shield-renderer", "action-delegate", "companion-app":
            _ = try options.uniqueMapping(allowed: product)
        case "notifier":
            let fields = try options.uniqueMapping(allowed: notifier)
            for rule in try fields["rules"]?.list() ?? [] { _ = try rule.uniqueMapping(allowed: notifierRule) }
            if let quiet = fields["quietHours"] { _ = try quiet.uniqueMapping(allowed: quietHours) }
        case "report-builder":
            _ = try options.uniqueMapping(allowed: reportBuilder)
        default:
            break
        }
    }
}
