// fixture-in-process: the in-process fixture's components as plugin processes (one per principal class).

import InProcessPlugins
import ShieldBusSDK

PluginHost.run(InProcessPlugins.program)
