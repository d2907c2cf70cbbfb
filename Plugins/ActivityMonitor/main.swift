// activity-monitor: the reference DeviceActivity monitor — owner of the shields, chained re-checks, passes, nudges.

import ReferenceKit
import ShieldBusSDK

PluginHost.run(ReferencePlugin.monitor)
