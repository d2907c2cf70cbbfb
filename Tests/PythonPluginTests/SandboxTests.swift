import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// Supervised plugins run sandboxed, as iOS runs extensions (docs/security.md § "Plugins are sandboxed"): a plugin
/// that tries what a hostile one would (sandbox_probe.py) finds no cookie, no other process's environment, none of
/// the device's own state and none of the user's files; a shield configuration plugin reaches no network, while a
/// plugin of a role iOS lets use the network does. Run with `--no-sandbox`, the same probe finds all of it, which is
/// what proves the probe honest.
final class SandboxTests: XCTestCase {
    static let probePath = BuildProducts.repositoryRoot.appendingPathComponent("Tests/PythonPluginTests/sandbox_probe.py").path

    func testASandboxedPluginSeesNoCookieNoOtherProcessNoDeviceStateAndAShieldPluginNoNetwork() throws {
        let run = try probeRun(arguments: [])
        defer { run.listener.close() }
        for name in ["probe-shield", "probe-generic"] {
            let found = run.found[name]!
            XCTAssertEqual(found["cookie"]?.boolValue, false, "\(name) read the cookie: \(found.jsonText)")
            XCTAssertTrue(Set(found["runtime"]?.arrayValue?.compactMap(\.stringValue) ?? ["?"]).isSubset(of: ["bus.sock", "options", "state"]),
                          "\(name) sees only the socket, its options and the (hidden) state folder in the runtime folder: \(found.jsonText)")
            XCTAssertEqual(found["deviceStore"]?.boolValue, false, "\(name) read device.sqlite")
            XCTAssertEqual(found["busStore"]?.boolValue, false, "\(name) read bus.sqlite")
            XCTAssertEqual(found["state"]?.arrayValue, ["appgroups", "containers", "cursors"], "\(name)'s view of the state folder")
            XCTAssertEqual(found["otherContainers"]?.arrayValue, [], "\(name) sees another plugin's container")
            // Its own App Group and record of handled events, and nothing of another product's group or plugin's record.
            let group = Self.groups[name]!
            XCTAssertEqual(found["appGroups"]?.arrayValue?.compactMap(\.stringValue), [group, group + "/Library", group + "/Library/Preferences"],
                           "\(name)'s App Groups: \(found.jsonText)")
            XCTAssertEqual(found["cursors"]?.arrayValue?.compactMap(\.stringValue), [name], "\(name)'s records of handled events")
            XCTAssertEqual(found["otherGroupStore"]?.boolValue, false, "\(name) read another product's App Group store")
            let otherRecord = StatePaths.handledEventsRecord(name == "probe-shield" ? "probe-generic" : "probe-shield", in: run.state)
            XCTAssertFalse(FileManager.default.fileExists(atPath: otherRecord), "\(name) wrote another plugin's record of handled events")
            XCTAssertEqual(found["madeUpRecord"]?.stringValue, "Read-only file system", "\(name) wrote beside the folders it was given: \(found.jsonText)")
            XCTAssertEqual(found["processes"]?.intValue, 1, "\(name) sees only itself among processes")
            XCTAssertEqual(found["otherCredentials"]?.arrayValue, [], "\(name) read another plugin's credential")
            XCTAssertEqual(found["userFile"]?.boolValue, false, "\(name) read a file of the user's")
            XCTAssertEqual(found["pid"]?.intValue, 1, "\(name) is the first process of its own pid namespace")
            // The host's /etc as far as a program needs it (each name that the host has), and nothing else of it.
            let needed = ["alternatives", "ca-certificates", "group", "hosts", "ld.so.cache", "localtime", "nsswitch.conf", "passwd", "resolv.conf", "ssl", "timezone"]
            XCTAssertEqual(found["etc"]?.arrayValue?.compactMap(\.stringValue), needed.filter { FileManager.default.fileExists(atPath: "/etc/" + $0) },
                           "\(name)'s /etc")
            XCTAssertEqual(found["sslPrivate"]?.boolValue, false, "\(name) sees the host's TLS keys' folder")
            if FileManager.default.fileExists(atPath: "/etc/ssl/certs") { XCTAssertEqual(found["certificates"]?.boolValue, true, "\(name) has the TLS certificates") }
            XCTAssertEqual(found["localhost"]?.stringValue, "127.0.0.1", "\(name) resolves names through its /etc")
            XCTAssertEqual(found["sys"]?.arrayValue, ["/devices/system/cpu/online", "/devices/system/cpu/possible"],
                           "\(name) sees of /sys only the processor counts")
            XCTAssertEqual(found["cpus"]?.intValue, Int64(ProcessInfo.processInfo.processorCount), "\(name) counts the machine's processors")
            XCTAssertEqual(found["dev"]?.arrayValue?.compactMap(\.stringValue), ["fd", "full", "null", "random", "shm", "stderr", "stdin", "stdout", "urandom", "zero"],
                           "\(name)'s /dev: the data devices, no terminal")
            XCTAssertEqual(found["capabilities"]?.intValue, 0, "\(name) holds capabilities (the broker's user: \(getuid()))")
            XCTAssertEqual(found["deviceNode"]?.boolValue, false, "\(name) made a device node for a disk")
        }
        XCTAssertEqual(run.found["probe-shield"]?["network"]?.boolValue, false, "the shield configuration plugin reached the network")
        XCTAssertEqual(run.found["probe-generic"]?["network"]?.boolValue, true, "a generic plugin keeps the network: \(run.found["probe-generic"]!.jsonText)")
    }

    func testUnsandboxedTheSameProbeFindsEverythingAndTheBrokerSaysSoLoudly() throws {
        let run = try probeRun(arguments: ["--no-sandbox"])
        defer { run.listener.close() }
        let found = run.found["probe-shield"]!
        XCTAssertEqual(found["cookie"]?.boolValue, true, found.jsonText)
        XCTAssertEqual(found["deviceStore"]?.boolValue, true, found.jsonText)
        XCTAssertEqual(found["userFile"]?.boolValue, true, found.jsonText)
        XCTAssertEqual(found["otherContainers"]?.arrayValue, ["probe-generic"], found.jsonText)
        XCTAssertEqual(found["otherGroupStore"]?.boolValue, true, found.jsonText)
        XCTAssertEqual(found["otherRecordWritten"]?.boolValue, true, found.jsonText)
        XCTAssertEqual(found["madeUpRecord"]?.stringValue, "written", found.jsonText)
        XCTAssertEqual(found["network"]?.boolValue, true, found.jsonText)
        if getuid() == 0 {  // only root's processes hold capabilities of their own
            XCTAssertNotEqual(found["capabilities"]?.intValue, 0, found.jsonText)
            XCTAssertEqual(found["deviceNode"]?.boolValue, true, found.jsonText)
        }
        XCTAssertTrue(run.brokerLog.contains("WARNING: plugins run UNSANDBOXED"), run.brokerLog)
    }

    /// Each probe's App Group: two products' groups.
    static let groups = ["probe-shield": "group.probe.shield", "probe-generic": "group.probe.generic"]

    private struct ProbeRun {
        let found: [String: JSONValue]
        let brokerLog: String
        let listener: LoopbackListener
        let state: String
        /// Kept until the run is read: it holds the state folder.
        let work: TemporaryDirectory
    }

    /// Runs a broker with two probes (a shield and a generic plugin) until both wrote what they found.
    private func probeRun(arguments: [String]) throws -> ProbeRun {
        _ = try requirePython()
        let listener = try LoopbackListener()
        let userFile = TemporaryDirectory(prefix: "sbuser")
        try "private".write(toFile: userFile.file("notes.txt"), atomically: true, encoding: .utf8)
        let work = TemporaryDirectory(prefix: "sbprobe"), runtime = work.file("run"), state = runtime + "/state"
        let other = ["probe-shield": "probe-generic", "probe-generic": "probe-shield"]
        let plugins = ["probe-shield": "shield", "probe-generic": "generic"].sorted { $0.key < $1.key }.map { name, role in
            """
              - {name: \(name), \(PluginPython.entryFields), role: \(role), restart: never, arguments: ["\(Self.probePath)"], appGroup: \(Self.groups[name]!),
                 environment: {PROBE_PORT: "\(listener.port)", PROBE_USER_FILE: "\(userFile.file("notes.txt"))",
                               PROBE_OTHER_STORE: "\(StatePaths.appGroupStore(Self.groups[other[name]!]!, in: state))",
                               PROBE_OTHER_RECORD: "\(StatePaths.handledEventsRecord(other[name]!, in: state))"}}
            """
        }.joined(separator: "\n")
        let groups = Self.groups.values.sorted().map { "  - {name: \($0), slices: {}}" }.joined(separator: "\n")
        let broker = try BrokerProcess(configuration: "name: sandbox-probe\nappGroups:\n\(groups)\nplugins:\n\(plugins)\n", arguments: arguments,
                                       runtimeDirectory: runtime)
        var found: [String: JSONValue] = [:]
        waitUntil("both probes to write what they found (log: \(broker.logPath))", timeoutSeconds: 20) {
            for name in ["probe-shield", "probe-generic"] where found[name] == nil {
                if let data = FileManager.default.contents(atPath: state + "/containers/\(name)/probe.json") {
                    found[name] = try? JSONValue(parsing: String(decoding: data, as: UTF8.self))
                }
            }
            return found.count == 2
        }
        _ = broker.stop()
        XCTAssertEqual(found.count, 2, "the probes' logs: \(broker.runtime.logsPath)")
        guard found.count == 2 else { throw POSIXError(.ENOENT) }
        return ProbeRun(found: found, brokerLog: broker.log(tail: 200), listener: listener, state: state, work: work)
    }
}

/// A TCP listener on 127.0.0.1 the probes try to reach (it only has to accept the connection).
final class LoopbackListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(descriptor, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(descriptor) }
}
