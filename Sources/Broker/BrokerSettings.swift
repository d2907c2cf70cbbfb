import BusClient
import BusProtocol
import ZeroMQ

/// Everything the broker core needs to know to run: where it listens, its limits, which plugins to start.
public struct BrokerSettings: Sendable {
    /// The private folder for sockets, lock, pid file and plugin logs.
    public var runtimeDirectory: RuntimeDirectory
    /// Where to listen; nil means `ipc://<runtime dir>/bus.sock`.
    public var endpoint: String?
    /// The largest body accepted, in bytes.
    public var maximumBodyBytes: Int = defaultMaximumBodyBytes
    /// How often the broker and its clients send heartbeats (wall-clock milliseconds).
    public var heartbeatMilliseconds: Int64 = 1000
    /// A client silent for this long is considered gone (wall-clock milliseconds).
    public var sessionTimeoutMilliseconds: Int64 = 5000
    /// How long (wall ms) to wait for every supervised plugin to connect before `bus.ready` goes out anyway.
    public var startupTimeoutMilliseconds: Int64 = 10_000
    /// How long (wall ms) virtual time waits for a plugin's acknowledgements before it stops waiting for it.
    public var acknowledgementTimeoutMilliseconds: Int64 = 5_000
    /// Messages queued per receiver before deliveries to it are dropped (and reported).
    public var deliveryHighWaterMark: Int32 = 100_000
    /// The broker's own crash-safe state (`<state dir>/bus.sqlite`): durable cursors, sequence number, bus time.
    /// Without it, unacknowledged events still go to a plugin's next process, but not across a broker restart.
    public var deliveryStorePath: String?
    /// The most unacknowledged events kept per supervised plugin; beyond it a `delivery-log-full` error.
    public var deliveryLogLimit: Int = 100_000
    /// Where to write the journal of every event (JSON Lines), if anywhere.
    public var journalPath: String?
    /// Append to the journal instead of starting it afresh (a resumed scenario, `shieldbus run --resume`).
    public var journalAppends = false
    /// The plugins to start and supervise.
    public var plugins: [PluginSpec] = []
    /// How the plugins are confined. `shieldbus run` sandboxes them unless told not to; a broker embedded in a test
    /// chooses.
    public var sandbox: PluginSandbox.Mode = .off
    /// Whether an SDK-based plugin launches from a template process, forked per launch, rather than being executed
    /// each time (`LaunchTemplates`; sandboxed plugins only). Off, every launch is a plain one.
    public var launchTemplates = true
    /// An explore worker's sandboxes and launch templates, kept across its days and prepared for this one (nil: the
    /// run starts its own).
    public var keptLaunchTemplates: KeptLaunchTemplates?
    /// For fault tests: the broker kills itself (SIGKILL) at this point of the first batch that sequences or holds
    /// an event on this topic.
    public var crashPoint: CrashPoint?
    /// Which batch with an event on the crash point's topic it is (1: the first).
    public var crashOccurrence = 1
    /// What stores opened before the broker (the device's state, the app groups) lost to the machine's restart (a
    /// power cut), as their openers said it: logged and published as `bus.error` `writes-lost` right after
    /// `bus.started`, with what the delivery store lost.
    public var storeLosses: [String] = []
    /// Facts handed to every plugin in its welcome (time zone, profile, …).
    public var settingsForPlugins: JSONValue = [:]
    /// Who may connect on tcp (required there; ignored on ipc, where the runtime directory's mode keeps others out).
    public var curve: CurveAdmission?

    /// The largest frame libzmq reads (ZMQ_MAXMSGSIZE): room for the largest body written with whitespace, plus
    /// the message's other members. A larger frame closes the connection before anything is allocated for it.
    public var maximumFrameBytes: Int64 { Int64(maximumBodyBytes) * 2 + 65_536 }
    /// Which roles outside clients (admitted by the cookie) may take; the configuration's `clients:`.
    public var outsideClients: [ClientGrant] = ClientGrant.defaults

    /// The product's roles, the topics only the system publishes, and which role answers which request.
    public var table: BusTable

    public init(runtimeDirectory: RuntimeDirectory, endpoint: String? = nil, table: BusTable) {
        self.runtimeDirectory = runtimeDirectory
        self.endpoint = endpoint
        self.table = table
    }

    /// The endpoint the broker binds.
    public var bindEndpoint: String { endpoint ?? runtimeDirectory.defaultEndpoint }
}

/// What a sandboxed plugin sees of the state: the folders it owns, the files it is handed, and what is hidden even
/// when a folder it reads holds it.
public struct PluginFiles: Equatable, Sendable {
    /// Folders of the device made for it (its container, its App Groups' folders, its record of handled events): read
    /// and written, and a sandbox that cannot show one is not started — the plugin would write into the sandbox's own
    /// empty folder and lose it.
    public var own: [String] = []
    /// Other folders it reads and writes (a configuration's `writable:`), shown if they exist.
    public var writable: [String] = []
    /// Files and folders it only reads (its options file), shown if they exist.
    public var readable: [String] = []
    /// Folders shown empty (the state folder: only what `own` and `writable` name of it is shown).
    public var hidden: [String] = []

    public init(own: [String] = [], writable: [String] = [], readable: [String] = [], hidden: [String] = []) {
        self.own = own
        self.writable = writable
        self.readable = readable
        self.hidden = hidden
    }
}

/// Where a fault test has the broker kill itself: around the save of `bus.sqlite` that makes a batch of events
/// durable (the journal is written before it, deliveries go out after it).
public enum CrashPoint: Sendable, Equatable {
    case beforeSaving(topic: String)
    case afterSaving(topic: String)

    var topic: String {
        switch self {
        case .beforeSaving(let topic), .afterSaving(let topic): return topic
        }
    }
}

/// Who may connect on tcp: the broker's CURVE key pair, and the clients' public keys (Z85) with a name for logs.
public struct CurveAdmission: Sendable {
    public var serverKeys: CurveKeyPair
    public var allowedClients: [String: String]

    public init(serverKeys: CurveKeyPair, allowedClients: [String: String]) {
        self.serverKeys = serverKeys
        self.allowedClients = allowedClients
    }
}

/// Why the broker cannot listen where it was asked to.
public enum ListenError: Error, Equatable, CustomStringConvertible {
    case badEndpoint(BusEndpointError)
    /// tcp without a CURVE configuration.
    case curveRequired(endpoint: String)
    /// This libzmq was built without CURVE (libsodium).
    case curveUnavailable(libzmqVersion: String)

    public var description: String {
        switch self {
        case .badEndpoint(let error): return error.description
        case .curveRequired(let endpoint):
            return "\(endpoint) is tcp, which has no file permissions: the broker listens on tcp only with CURVE (its key pair and an allowlist)"
        case .curveUnavailable(let version):
            return "this libzmq (\(version)) was built without CURVE (zmq_has(\"curve\") is false), so the bus cannot listen on tcp safely; install a libzmq built with libsodium (Debian's libzmq5 is) or use ipc://"
        }
    }
}

/// A plugin the broker starts as a child process and supervises.
public struct PluginSpec: Equatable, Sendable {
    public var name: String
    /// The executable's path.
    public var executable: String
    public var arguments: [String] = []
    /// Extra environment variables (the broker adds SHIELDBUS_* ones).
    public var environment: [String: String] = [:]
    public var role: Role
    /// Restart after a crash, with exponential backoff.
    public var restart: RestartPolicy = .onFailure
    /// Short-lived, like an iOS extension under the ios-realistic profile: the plugin ends after each callback
    /// and is started again at once; events for it meanwhile wait in its mailbox.
    public var ephemeral = false
    /// Launched again by the run's plan — its scenario restarts the device or force-quits the plugin's app —, so its
    /// launch template pays from its first launch and starts with the run, as a short-lived extension's does.
    public var launchedAgain = false
    /// Topic namespaces of its own, beyond `x.<name>.` (the configuration's `namespaces:`): only it publishes there.
    public var namespaces: [String] = []
    /// What it sees of the files when sandboxed, beyond the system's and its program's.
    public var files = PluginFiles()
    /// It may publish the person's input (`input.*`), as a test driver under development does (`personInput: true`).
    public var personInput = false
    /// It runs without network when sandboxed on an ipc bus, as iOS runs some extensions (`Role.runsWithoutNetwork`).
    public var offline = false

    public init(name: String, executable: String, arguments: [String] = [], environment: [String: String] = [:],
                role: Role, restart: RestartPolicy = .onFailure, ephemeral: Bool = false, namespaces: [String] = [],
                files: PluginFiles = PluginFiles(), personInput: Bool = false, offline: Bool = false) {
        self.files = files
        self.offline = offline
        self.personInput = personInput
        self.ephemeral = ephemeral
        self.namespaces = namespaces
        self.name = name
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.role = role
        self.restart = restart
    }
}

/// When a stopped plugin is started again.
public enum RestartPolicy: String, Sendable, CaseIterable {
    /// Never.
    case never
    /// After it exits with a failure or is killed by a signal.
    case onFailure = "on-failure"
    /// After any exit.
    case always
}

/// What outside clients admitted by the cookie may be: the roles they may take, for clients of one name or (no
/// name) of any name, and the topic namespaces that client alone may publish into.
public struct ClientGrant: Equatable, Sendable {
    /// The client's name; nil for any client.
    public var name: String?
    public var roles: [Role]
    public var namespaces: [String]

    public init(name: String? = nil, roles: [Role], namespaces: [String] = []) {
        self.name = name
        self.roles = roles
        self.namespaces = namespaces
    }

    /// Without a `clients:` section: taps and generic plugins, of any name. The person's tools need no grant: the
    /// tool credential admits them.
    public static let defaults = [ClientGrant(roles: [.tap, .generic])]
}
