import BedtimeExtensions
import NaivePluginKit
import NotifierExtension
import ProfilesExtensions
import ReferenceKit
import ReportBuilderExtension
import ShieldBusSDK
import ShieldRendererExtension

/// The programs of the shipped configurations' plugins (`Config/*.yml`), by executable name: each executable's
/// `main` runs the same program as a process.
public enum ShippedPrograms {
    public static let all: [String: PluginProgram] = [
        "activity-monitor": ReferencePlugin.monitor, "shield-renderer": ShieldRendererPlugin.program,
        "action-delegate": ReferencePlugin.actionDelegate, "companion-app": ReferencePlugin.companionApp,
        "notifier": NotifierPlugin.program, "report-builder": ReportBuilderPlugin.program,
        "bedtime": BedtimePlugin.program, "profiles": ProfilesPlugin.program, "naive-plugin": NaivePlugin.program,
    ]
}
