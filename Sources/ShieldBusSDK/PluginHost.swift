import BusClient
import BusProtocol
import Foundation

/// Anything `PluginHost.run` can host: it says which role it plays, what it listens to, and handles events.
public protocol BusComponent: AnyObject {
    /// The role announced in the hello.
    var role: Role { get }
    /// Topic prefixes to receive, beyond what the role needs.
    var subscriptions: [String] { get }
    /// Called once, connected, before the first event.
    func didStart()
    /// Called for every event, in sequence order, with bus time set to the event's time.
    func handle(_ envelope: Envelope)
}

extension BusComponent {
    public var subscriptions: [String] { [] }
    public func didStart() {}
}

/// Runs a plugin: connects to the broker (SHIELDBUS_ENDPOINT, or the runtime directory's endpoint), says hello,
/// subscribes, heartbeats, acknowledges handled events, reconnects after a broker restart, and returns
/// cleanly on SIGTERM.
public enum PluginHost {
    /// Runs the component made by `make`. Under the ios-realistic profile an extension is made anew for
    /// every callback, so state kept only in memory is lost between callbacks, as on a phone.
    public static func run<Component: BusComponent>(name: String? = nil, _ make: @escaping () -> Component) -> Never {
        let environment = ProcessInfo.processInfo.environment
        var component = make()
        let pluginName = name ?? environment["SHIELDBUS_PLUGIN_NAME"] ?? String(describing: Component.self).lowercased()
        let endpoint = environment["SHIELDBUS_ENDPOINT"] ?? RuntimeDirectory.resolve(nil).brokerEndpoint()
        do {
            let runtime = try PluginRuntime(name: pluginName, role: component.role, subscriptions: component.subscriptions, endpoint: endpoint)
            PluginRuntime.current = runtime
            try runtime.run({ envelope in
                if runtime.isExtension && runtime.hasQuirk("short-lived-extensions") && envelope.topic.hasPrefix("deviceactivity.") {
                    component = make()  // a fresh extension process, as far as the plugin's memory can tell
                }
                component.handle(envelope)
            }, onReady: { component.didStart() })
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("\(pluginName): \(error)\n".utf8))
            exit(1)
        }
    }

    /// Runs the component made from the plugin's options (the configuration's `plugins[].options`, decoded as
    /// `Options`). Options that do not decode end the process with status 2 and the reason on standard error
    /// (the plugin's log), before it connects.
    public static func run<Options: Decodable, Component: BusComponent>(options: Options.Type, _ make: @escaping (Options) -> Component) -> Never {
        let decoded: Options
        do {
            decoded = try PluginRuntime.launchOptions(as: options)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(2)
        }
        run { make(decoded) }
    }
}

/// A plugin of any kind: override `handle` and publish with `PluginRuntime.current`.
open class BusPlugin: BusComponent {
    open var role: Role { .generic }
    open var subscriptions: [String] { [] }
    public init() {}
    open func didStart() {}
    open func handle(_ envelope: Envelope) {}
}

/// The running plugin's runtime; fails clearly outside `PluginHost.run`.
func runtime() throws -> PluginRuntime {
    guard let runtime = PluginRuntime.current else { throw PluginError.notRunning }
    return runtime
}
