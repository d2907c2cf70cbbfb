import BusClient
import CLaunchTemplate
import BusProtocol
import Foundation

/// Anything `PluginHost.run` can host: it says which role it plays, what it listens to, and handles events.
public protocol BusComponent: AnyObject {
    /// The role announced in the hello.
    var role: Role { get }
    /// Topic prefixes to receive, beyond what the role needs.
    var subscriptions: [String] { get }
    /// Prefixes among `subscriptions` the plugin only observes — it records them and makes no OS call while
    /// handling them (its publications then are sequenced at the next quiet point): in virtual time they cost no turn.
    var observedTopics: [String] { get }
    /// The App-Group keys whose changes its `state.changed` subscription delivers, by group (exact keys, or prefixes
    /// ending in `*`): the broker then hands it no other change, each of which would cost it a turn. Nil: every change.
    var watchedStateKeys: [String: [String]]? { get }
    /// Called once, connected, before the first event.
    func didStart()
    /// Called for every event, in sequence order, with bus time set to the event's time.
    func handle(_ envelope: Envelope)
}

extension BusComponent {
    public var subscriptions: [String] { [] }
    public var observedTopics: [String] { [] }
    public var watchedStateKeys: [String: [String]]? { nil }
    public func didStart() {}
}

/// Runs a plugin: checks its app group, connects to the broker (SHIELDBUS_ENDPOINT, or the runtime directory's
/// endpoint), says hello, subscribes, heartbeats, acknowledges handled events, reconnects after a broker restart,
/// and returns cleanly on SIGTERM. A plugin that cannot start says why on standard error (its log) and exits
/// with a status that tells the broker whether restarting it can help (`PluginExitStatus`).
public enum PluginHost {
    /// Runs the component made by `make`. Under the ios-realistic profile an extension's process ends after each
    /// callback and the broker starts it again for the next (SHIELDBUS_EPHEMERAL), so state kept only in memory
    /// is lost between callbacks, as on a phone.
    public static func run<Component: BusComponent>(name: String? = nil, _ make: @escaping () -> Component) -> Never {
        let component = make()
        let pluginName = name ?? LaunchEnvironment["SHIELDBUS_PLUGIN_NAME"] ?? String(describing: Component.self).lowercased()
        do {
            let runtime = try makeRuntime(named: pluginName, for: component, hostedInProcess: false)
            PluginRuntime.setProcessRuntime(runtime)
            try runtime.run({ envelope in component.handle(envelope) }, onReady: { component.didStart() })
            shieldbus_end_process(0)
        } catch {
            FileHandle.standardError.write(Data("\(pluginName): \(error)\n".utf8))
            shieldbus_end_process(PluginExitStatus.status(for: error))
        }
    }
}

extension PluginHost {
    /// The runtime of `component` as plugin `name`, connecting to the launch environment's broker (its
    /// `SHIELDBUS_ENDPOINT`, or the runtime directory's endpoint), once its app group is checked.
    static func makeRuntime(named name: String, for component: BusComponent, hostedInProcess: Bool) throws -> PluginRuntime {
        let environment = LaunchEnvironment.variables
        let endpoint = environment["SHIELDBUS_ENDPOINT"] ?? RuntimeDirectory.resolve(nil, environment: environment).brokerEndpoint()
        let loss = try PluginAppGroup.verify()
        let runtime = try PluginRuntime(name: name, role: component.role, subscriptions: component.subscriptions,
                                        observedTopics: component.observedTopics, watchedStateKeys: component.watchedStateKeys,
                                        endpoint: endpoint, hostedInProcess: hostedInProcess)
        runtime.failuresAtLaunch = (loss.map { [$0] } ?? []) + PluginAppGroup.lossesAtLaunch.withValue { taken in defer { taken = [] }; return taken }
        let checked = PluginAppGroup.checkedAtLaunch.withValue { taken in defer { taken = [:] }; return taken }
        runtime.appGroupsCheckedAtLaunch.withValue { $0.merge(checked) { _, launched in launched } }
        return runtime
    }

    /// Runs the extension whose principal class the configuration names (`principalClass:`, as an extension's
    /// Info.plist names its `NSExtensionPrincipalClass`) among the program's `principalClasses` — or, when it names
    /// none, the only one given. One program may so hold several extensions, each run as its own process:
    ///
    ///     PluginHost.run(principalClasses: ["FocusShieldConfiguration": FocusShieldConfiguration.init,
    ///                                       "FocusShieldAction": FocusShieldAction.init])
    public static func run(principalClasses: KeyValuePairs<String, @Sendable () -> BusComponent>) -> Never {
        run(PluginProgram.principalClasses(principalClasses))
    }

    /// Runs the component made from the plugin's options (the configuration's `plugins[].options`, decoded as
    /// `Options`). Options that do not decode end the process with `PluginExitStatus.configurationError` and the reason on standard error
    /// (the plugin's log), before it connects.
    public static func run<Options: Decodable, Component: BusComponent>(options: Options.Type, _ make: @escaping @Sendable (Options) -> Component) -> Never {
        run(PluginProgram.options(options) { make($0) })
    }
}

/// Options that name the plugin's app group (`appGroup:`): `PluginHost.run(options:)` opens the group before the
/// plugin starts, so a wrong name stops it at once — the reason in its log and in `shieldbus status` — and a
/// plugin never runs without its storage.
public protocol AppGroupOptions {
    var appGroup: String { get }
}

/// How a plugin's exit status tells its supervisor whether starting it again can help.
public enum PluginExitStatus {
    /// sysexits' EX_CONFIG: the plugin's configuration is wrong (its hello was refused, its app group does not
    /// exist); the broker marks it failed at once, with the plugin's last line of output, instead of restarting it.
    public static let configurationError = SupervisedExitStatus.configurationError
    /// sysexits' EX_TEMPFAIL: the plugin's storage cannot be used now (a full or read-only disk, a store held past
    /// the busy timeout); the broker starts it again, backing off to 5 s, for as long as it takes, without counting
    /// the exits towards a crash loop: waiting for room is not crashing. The SDK exits so when its own stores (the
    /// app group, the record of handled events) cannot be opened at start; a plugin's own databases are its to judge.
    public static let storageUnavailable = SupervisedExitStatus.storageUnavailable
    /// Anything else that went wrong: the broker restarts the plugin by its restart policy.
    public static let failure: Int32 = 1

    /// Hello refusals a new process would get again: the hello itself is wrong.
    static let permanentRefusals: Set<String> = ["bad-hello", "unsupported-version", "missing-field", "mistyped-field", "not-json"]

    /// The exit status for the error that stopped a plugin.
    public static func status(for error: Error) -> Int32 {
        switch error {
        case PluginError.configuration: return configurationError
        case PluginError.storageUnavailable: return storageUnavailable
        case BusClientError.refused(let report) where permanentRefusals.contains(report.code): return configurationError
        default: return failure
        }
    }
}

/// A plugin of any kind: override `handle` and publish with `PluginRuntime.current`.
open class BusPlugin: BusComponent {
    open var role: Role { .generic }
    open var subscriptions: [String] { [] }
    open var observedTopics: [String] { [] }
    open var watchedStateKeys: [String: [String]]? { nil }
    public init() {}
    open func didStart() {}
    open func handle(_ envelope: Envelope) {}
}

/// The running plugin's runtime; fails clearly outside `PluginHost.run`.
func runtime() throws -> PluginRuntime {
    guard let runtime = PluginRuntime.current else { throw PluginError.notRunning }
    return runtime
}

/// A component chosen at run time (`run(principalClasses:)`), hosted through the protocol's requirements.
final class AnyComponent: BusComponent {
    let base: BusComponent
    init(_ base: BusComponent) { self.base = base }
    var role: Role { base.role }
    var subscriptions: [String] { base.subscriptions }
    var observedTopics: [String] { base.observedTopics }
    var watchedStateKeys: [String: [String]]? { base.watchedStateKeys }
    func didStart() { base.didStart() }
    func handle(_ envelope: Envelope) { base.handle(envelope) }
}
