// notifier: posts notifications and leaves pending deep-link routes. (being written)
import ShieldBusSDK
PluginHost.run { BusPlugin() }
