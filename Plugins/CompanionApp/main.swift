// companion-app: the reference main app — authorization, the selection, schedules, unlocks, the foreground check.

import ReferenceKit
import ShieldBusSDK

PluginHost.run {
    let (options, defaults) = ReferencePlugin.setUp()
    return ReferenceCompanionApp.make(options: options, defaults: defaults)
}
