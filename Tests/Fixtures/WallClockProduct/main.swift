// The night focus product's plugins; the configuration names which monitor runs.
import ShieldBusSDK

typealias UserDefaults = AppGroupUserDefaults

PluginHost.run(principalClasses: [
    "SystemTimeNightMonitor": SystemTimeNightMonitor.init,
    "BusTimeNightMonitor": BusTimeNightMonitor.init,
    "NightApp": NightApp.init,
    "GroupProbeApp": GroupProbeApp.init,
    "GroupProbeWriter": GroupProbeWriter.init,
    "LateAction": LateAction.init,
    "SlowAction": SlowAction.init,
    "TimedWaitsAction": TimedWaitsAction.init,
])
