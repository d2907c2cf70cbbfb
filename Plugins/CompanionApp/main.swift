// companion-app: the reference main app — authorization, the selection, schedules, unlocks, the foreground check.

import ReferenceKit
import ShieldBusSDK

PluginHost.run(ReferencePlugin.companionApp)
