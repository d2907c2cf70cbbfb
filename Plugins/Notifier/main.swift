// notifier: posts notifications for the events its rules name, within quiet hours and one-per-kind windows, and leaves the pending deep-link route.

import NotifierExtension
import ShieldBusSDK

PluginHost.run(NotifierPlugin.program)
