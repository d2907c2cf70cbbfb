// action-delegate: the reference shield action delegate — what the buttons do; records passes and nudges.

import ReferenceKit
import ShieldBusSDK

PluginHost.run(ReferencePlugin.actionDelegate)
