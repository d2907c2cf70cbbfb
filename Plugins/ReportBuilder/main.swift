// report-builder: the DeviceActivityReport extension — usage aggregates, daily and weekly reports, insights. (being written)
import ShieldBusSDK
PluginHost.run { BusPlugin() }
