// report-builder: the DeviceActivityReport extension, unsandboxed — usage recorded as it happens, per-day buckets in its App-Group slice, reports on the bus.

import ReportBuilderExtension
import ShieldBusSDK

// The heap's thresholds are the process's: set here, not by the hostable library.
FreedMemoryRetention.apply()
PluginHost.run(ReportBuilderPlugin.program)
