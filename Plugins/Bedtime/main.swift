// Bedtime: a product written only against the public API — the Apple-shaped modules, ShieldBusSDK and MonitorKit:
// every night 22:30–06:30 the picked apps and games are shielded; the shield's secondary button grants five more
// minutes on that app, at most twice a night; a wind-down notification at 22:15 links into the app; "skip tonight"
// from the app lifts tonight's shield. Config/bedtime.yml runs it and states its promise.
//
// Usage: the configuration names each plugin's principal class (BedtimeMonitor, BedtimeShield, BedtimeAction, BedtimeApp).
import BedtimeExtensions
import ShieldBusSDK

PluginHost.run(BedtimePlugin.program)
