// The extensions of the seeds' focus product in one program; the configuration names each plugin's principal class.
import ShieldBusSDK

// App Groups behind UserDefaults (docs/porting-from-ios.md): this module's declaration wins over Foundation's.
typealias UserDefaults = AppGroupUserDefaults

PluginHost.run(principalClasses: [
    "FocusShieldConfiguration": FocusShieldConfiguration.init,
    "ShieldConfigurationExtension": ShieldConfigurationExtension.init,
    "FocusShieldAction": FocusShieldAction.init,
    "FocusPassAction": FocusPassAction.init,
    "FocusPassMonitor": FocusPassMonitor.init,
    "FocusApp": FocusApp.init,
])
