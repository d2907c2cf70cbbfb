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
    /// The plugin's storage cannot be used now (a full or read-only disk, a store held by another process past the
    /// busy timeout): the same start may succeed later.
    case storageUnavailable(String)
    /// A call (an OS request) made while handling an event the plugin only observes (`observedTopics`).
    case callWhileObserving(call: String, event: String)
    /// The call lost its broker before the reply came. In a supervised plugin (whose cursor the broker keeps) the
    /// event being handled is neither recorded as handled nor acknowledged: it comes back (to this process's new
    /// session, or to its next process) and is handled again from the start, so a handler need not make up for
    /// it; until that handling ends, further calls fail the same way and what it publishes is not sent
    /// (docs/protocol.md § 9.1). A plugin started by hand gets nothing again: its handler's answer is all there is.
    case callInterrupted(call: String, by: CallInterruption)

    public var description: String {
        switch self {
        case .device(let error): return error.description
        case let .timeout(topic, milliseconds): return "no reply to \(topic) within \(milliseconds) ms"
        case .unavailableInExtension(let what): return "\(what) is unavailable in app extensions (as on iOS)"
        case .notRunning: return "this call needs a running plugin: call it from inside PluginHost.run"
        case .configuration(let what): return what
        case .storageUnavailable(let what): return what
        case let .callWhileObserving(call, event): return "\(call) cannot be called while handling \(event), which this plugin only observes (observedTopics): observe fewer topics, or call in a turn of its own"
        case let .callInterrupted(call, interruption): return "no reply to \(call): \(interruption); the event being handled will be handled again"
        }
    }
}

/// How a call lost its broker while it waited for the reply.
public enum CallInterruption: Equatable, Sendable, CustomStringConvertible {
    /// The broker said goodbye (`bye`): it is stopping, and answers nothing more.
    case brokerLeft(reason: String)
    /// The plugin was welcomed again — by a restarted broker, or by one that had ended its session: the request
    /// ended with the old session (docs/protocol.md § 6.4).
    case newSession
    /// SIGTERM or SIGINT arrived: the process is ending (a supervised plugin gets SIGTERM when its broker dies).
    case stopRequested
    /// The broker said nothing, not even a heartbeat, while the call waited: stopped or gone. The connection says
    /// hello again, and the event comes again in that new session.
    case brokerSilent

    public var description: String {
        switch self {
        case .brokerLeft(let reason): return "the broker left (\(reason))"
        case .newSession: return "the plugin was welcomed by a new session of the broker (it restarted, or had ended the old session)"
        case .stopRequested: return "the process was asked to stop"
        case .brokerSilent: return "the broker was silent while the call waited (stopped, or gone)"
        }
    }
}
