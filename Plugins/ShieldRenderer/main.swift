// shield-renderer: the reference shield configuration — the product's own voice, and the first re-block path.

import ShieldBusSDK
import ShieldRendererExtension

PluginHost.run(ShieldRendererPlugin.program)
