// ShieldBusSDK: write ShieldBus plugins with Apple's Screen Time API shapes — shield configuration, shield
// actions, DeviceActivity monitors, ManagedSettings stores, App-Group defaults — running on the bus.
//
// A plugin is a small executable: subclass one of the extension classes (or `App`, or `BusPlugin`) and call
// `PluginHost.run { MyExtension() }` from `main`. Plugins depend on this SDK, never on the broker.

@_exported import AppGroupStore
@_exported import BusProtocol
@_exported import DeviceAPI
@_exported import ScreenTime
import BusClient
import BusProtocol
import Foundation
import Logging

/// Errors the SDK raises on behalf of the simulated OS.
public enum PluginError: Error, CustomStringConvertible, Equatable {
    /// The OS answered a call with an error.
    case device(DeviceError)
    /// The OS did not answer within the time allowed.
    case timeout(topic: String, milliseconds: Int)
    /// The call is one iOS does not allow in an app extension.
    case unavailableInExtension(String)
    /// The plugin is not running inside `PluginHost.run`.
    case notRunning
    /// The plugin's environment is wrong (a missing variable, an unknown app group).
    case configuration(String)
    /// A call (an OS request) made while handling an event the plugin only observes (`observedTopics`).
    case callWhileObserving(call: String, event: String)

    public var description: String {
        switch self {
        case .device(let error): return error.description
        case let .timeout(topic, milliseconds): return "no reply to \(topic) within \(milliseconds) ms"
        case .unavailableInExtension(let what): return "\(what) is unavailable in app extensions (as on iOS)"
        case .notRunning: return "this call needs a running plugin: call it from inside PluginHost.run"
        case .configuration(let what): return what
        case let .callWhileObserving(call, event): return "\(call) cannot be called while handling \(event), which this plugin only observes (observedTopics): observe fewer topics, or call in a turn of its own"
        }
    }
}
