// fixture-in-process: the in-process fixture's components as plugin processes (one per principal class).

import InProcessPlugins
import ShieldBusSDK

PluginHost.run(principalClasses: [
    "SettingUpApp": InProcessPlugins.component(named: "SettingUpApp")!,
    "NamingShield": InProcessPlugins.component(named: "NamingShield")!,
    "ClosingAction": InProcessPlugins.component(named: "ClosingAction")!,
])
