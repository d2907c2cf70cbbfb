// Profiles: named blocking profiles on the same apps, as open-source blockers' users ask for — an evening profile
// (21:00–08:00, may be ended early), a strict workday profile (05:00–20:00 on weekdays, nothing ends it early), a
// deep-work session started and stopped in the app, and a 15-minute break that locks again by itself. Written only
// against the public API (the Apple-shaped modules, ShieldBusSDK, MonitorKit); Config/profiles.yml states its promise.
import ProfilesExtensions
import ShieldBusSDK

PluginHost.run(ProfilesPlugin.program)
