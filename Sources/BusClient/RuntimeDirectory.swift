// BusClient: a connection to the ShieldBus broker — finding it, the handshake, heartbeats, acks, gap checks, reconnects.

import Foundation

/// The private folder where a broker keeps its sockets, lock and pid file, and where clients find it.
///
/// Resolution order: an explicit path, `SHIELDBUS_RUNTIME_DIR`, `$XDG_RUNTIME_DIR/shieldbus`, `/tmp/shieldbus-<uid>`.
public struct RuntimeDirectory: Equatable, Sendable {
    public let path: String

    /// A relative `path` is taken from the working directory now: plugins, tools and sandboxes that find the folder
    /// through this path run elsewhere.
    public init(path: String) {
        let absolute = Self.absolute(path)
        self.path = absolute.hasSuffix("/") && absolute.count > 1 ? String(absolute.dropLast()) : absolute
    }

    /// `path` from the working directory now, if it is relative: for a folder that processes started elsewhere use.
    public static func absolute(_ path: String) -> String {
        path.hasPrefix("/") || path.isEmpty ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// The runtime directory to use, given an optional explicit path and the environment (nil: the process's, each
    /// variable read only when needed).
    public static func resolve(_ explicit: String?, environment: [String: String]? = nil) -> RuntimeDirectory {
        if let explicit, !explicit.isEmpty { return RuntimeDirectory(path: explicit) }
        func variable(_ name: String) -> String? {
            guard let environment else { return ProcessEnvironment.value(of: name) }
            return environment[name]
        }
        if let fromEnvironment = variable("SHIELDBUS_RUNTIME_DIR"), !fromEnvironment.isEmpty {
            return RuntimeDirectory(path: fromEnvironment)
        }
        if let xdg = variable("XDG_RUNTIME_DIR"), !xdg.isEmpty { return RuntimeDirectory(path: xdg + "/shieldbus") }
        return RuntimeDirectory(path: "/tmp/shieldbus-\(getuid())")
    }

    /// The broker's bus socket file.
    public var busSocketPath: String { path + "/bus.sock" }
    /// The default (ipc) bus endpoint.
    public var defaultEndpoint: String { "ipc://" + busSocketPath }
    /// Held (flock) by the running broker.
    public var lockPath: String { path + "/broker.lock" }
    /// The running broker's pid.
    public var pidPath: String { path + "/broker.pid" }
    /// The endpoint the running broker listens on, written at start (it may be tcp:// when `--endpoint` was given).
    public var endpointFilePath: String { path + "/endpoint" }
    /// The public certificate of the running broker's CURVE key (written when it listens on tcp).
    public var serverCertificatePath: String { path + "/broker.key" }
    /// The secret certificate the broker made for its own plugins and its user's tools on tcp (0600).
    public var localClientCertificatePath: String { path + "/local.key_secret" }
    /// The state folder of the last broker that ran here (written at its start, kept after it): where `shieldbus
    /// state` and `report` look when no `--state-dir` is given, so a broker run with its own `--state-dir` is found.
    public var stateDirectoryPointerPath: String { path + "/state-dir" }
    /// The state folder of the last broker that ran here, else the default `<runtime dir>/state`.
    public func stateDirectory() -> String {
        Self.written(in: stateDirectoryPointerPath) ?? path + "/state"
    }
    /// The journal the running broker writes (its absolute path, written at its start when it journals, removed
    /// when it stops): where the Studio reads what came before it connected.
    public var journalPointerPath: String { path + "/journal" }
    /// The journal of the broker running here, if it writes one.
    public func journalPath() -> String? {
        Self.written(in: journalPointerPath)
    }
    /// Where plugin processes' output goes.
    public var logsPath: String { path + "/logs" }
    /// Where each supervised plugin's options are written (`<name>.json`), for it to read at start: a file,
    /// not the environment, so their size does not matter.
    public var optionsPath: String { path + "/options" }

    /// The endpoint of the broker running here: what it wrote at start, else the default ipc endpoint.
    public func brokerEndpoint() -> String {
        Self.written(in: endpointFilePath) ?? defaultEndpoint
    }

    /// What the broker wrote in one of its pointer files (trimmed), if the file is there and not blank.
    private static func written(in file: String) -> String? {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Whether a broker appears to be running here (its socket or endpoint file exists).
    public var hasBroker: Bool {
        FileManager.default.fileExists(atPath: endpointFilePath) || FileManager.default.fileExists(atPath: busSocketPath)
    }

    /// Throws `permissionDenied` when the folder exists but this user may not enter it (another user's broker),
    /// so that tools say so instead of "no broker answered".
    public func checkAccess() throws {
        if access(path, X_OK) != 0 && errno == EACCES { throw BusClientError.permissionDenied(path: path) }
    }

    /// Throws unless a tool may talk to a broker here: `permissionDenied` for another user's folder, `noBroker` when
    /// none is running — said at once, instead of waiting for an answer that cannot come.
    public func checkBroker() throws {
        try checkAccess()
        guard hasBroker else { throw BusClientError.noBroker(runtimeDirectory: path) }
    }
}

/// Names in a device's state folder that both the broker and the plugins' SDK use.
public enum StateFolder {
    /// The folder where each supervised plugin's SDK records the events it has handled, so a redelivered event is not
    /// handled twice: a folder per plugin (`<plugin>/handled.sqlite`), which its sandbox shows it alone.
    public static let pluginCursors = "cursors"
    /// The device's App Groups: a folder per group (`AppGroupContainer`'s layout), which a sandbox shows only to the
    /// plugins in that group.
    public static let appGroups = "appgroups"

    /// The folder of plugin `name`'s record of handled events, relative to the state folder.
    public static func cursorFolder(plugin name: String) -> String { pluginCursors + "/" + name }

    /// Plugin `name`'s record of handled events, relative to the state folder.
    public static func handledEventsRecord(plugin name: String) -> String { cursorFolder(plugin: name) + "/handled.sqlite" }
}
