import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest
import ZeroMQ

/// The transport rules of docs/security.md, through the real broker: tcp only with CURVE and an allowlist,
/// no abstract sockets, private folders and files, another local user refused, frames bounded by libzmq.
final class TransportSecurityTests: XCTestCase {
    /// A broker on a tcp port of its choosing, admitting the key `dev` made with `shieldbus keys new`.
    func tcpBroker(keys: TemporaryDirectory) throws -> BrokerProcess {
        XCTAssertTrue(Curve.isAvailable, "this libzmq (\(libzmqVersion)) has no CURVE: zmq_has(\"curve\") is false — install libzmq built with libsodium")
        try runShieldBus(["keys", "new", "dev", "--directory", keys.path])
        return try BrokerProcess(configuration: """
            name: curve
            bus:
              curve:
                allow: [\(keys.file("dev.key"))]
            """, arguments: ["--endpoint", "tcp://127.0.0.1:*"])
    }

    func errorCount(_ broker: BrokerProcess, _ code: String) throws -> Int64 {
        try broker.status()["counters"]?["errorsByCode"]?[code]?.intValue ?? 0
    }

    /// A DEALER that says `status` to `endpoint`, with CURVE keys when given.
    func rawStatusRequest(_ endpoint: String, curve: CurveClientKeys?) throws -> (Socket, Context) {
        let context = try Context()
        let socket = try Socket(context, .dealer)
        try socket.setLinger(milliseconds: 0)
        if let curve { try socket.makeCurveClient(serverKey: curve.serverKey, keys: curve.keys) }
        try socket.connect(endpoint)
        try socket.send([Array("status".utf8), Array(#"{"v":1}"#.utf8)])
        return (socket, context)
    }

    func testTCPAdmitsOnlyAllowedCURVEKeys() throws {
        let keys = TemporaryDirectory(prefix: "sbkeys")
        let broker = try tcpBroker(keys: keys)
        defer { broker.stop() }
        let endpoint = broker.runtime.brokerEndpoint()
        XCTAssertTrue(endpoint.hasPrefix("tcp://127.0.0.1:"), endpoint)
        let serverKey = try CurveCertificate.read(path: broker.runtime.serverCertificatePath).publicKey

        // No key: the handshake fails; the broker logs and counts it, and nothing answers.
        let (plain, plainContext) = try rawStatusRequest(endpoint, curve: nil)
        try waitUntil("the broker to count the handshake without CURVE") { try errorCount(broker, "curve-handshake-failed") >= 1 }
        // A key not on the allowlist: ZAP refuses it.
        let stranger = CurveClientKeys(serverKey: serverKey, keys: try CurveKeyPair.generate())
        let (wrong, wrongContext) = try rawStatusRequest(endpoint, curve: stranger)
        try waitUntil("the broker to refuse the stranger's key") { try errorCount(broker, "curve-refused") >= 1 }
        // The allowed key, but the wrong broker key: the client cannot complete the handshake either.
        let dev = try XCTUnwrap(CurveCertificate.read(path: keys.file("dev.key_secret"), needSecret: true).keyPair)
        let impostorServer = try CurveKeyPair.generate().publicKey
        let (misdirected, misdirectedContext) = try rawStatusRequest(endpoint, curve: CurveClientKeys(serverKey: impostorServer, keys: dev))

        // The allowed key is welcomed, and its events reach others.
        let tap = try broker.connect(name: "watch", subscriptions: ["app.curve"])
        defer { tap.close() }
        let client = try BusConnection(endpoint: endpoint, hello: Hello(name: "dev", role: .generic, subscriptions: []),
                                       curve: CurveClientKeys(serverKey: serverKey, keys: dev))
        defer { client.close() }
        try client.connect()
        try client.publish(Publish(topic: "app.curve.hello", body: ["from": "dev"]))
        let events = try collectEvents(from: tap) { $0.contains { $0.topic == "app.curve.hello" } }
        XCTAssertEqual(events.first { $0.topic == "app.curve.hello" }?.source, "dev")

        // An allowed key with a credential that is not the cookie is refused: what a client presents must be right.
        var guessed = Hello(name: "dev-guess", role: .generic, subscriptions: [])
        guessed.credential = String(repeating: "0", count: 64)
        let guessing = try BusConnection(endpoint: endpoint, hello: guessed, curve: CurveClientKeys(serverKey: serverKey, keys: dev))
        defer { guessing.close() }
        XCTAssertThrowsError(try guessing.connect()) { error in
            guard case BusClientError.refused(let report) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(report.code, "not-admitted")
        }

        // By now the refused ones had every chance: none got an answer.
        for socket in [plain, wrong, misdirected] { XCTAssertNil(try socket.receive(dontWait: true), "a refused client got an answer") }
        withExtendedLifetime([plainContext, wrongContext, misdirectedContext]) {}
        XCTAssertTrue(broker.log().contains("not on the allowlist"), broker.log())
        XCTAssertTrue(broker.log().contains("no CURVE handshake"), broker.log())
    }

    func testKeysNewWritesAPrivateSecretAndNeverOverwrites() throws {
        let keys = TemporaryDirectory(prefix: "sbkeys")
        try runShieldBus(["keys", "new", "tool-key", "--directory", keys.path])
        let modes = try fileModes(keys.path)
        XCTAssertEqual(modes["tool-key.key_secret"], 0o600)
        XCTAssertEqual(modes["tool-key.key"], 0o644)
        let pair = try XCTUnwrap(CurveCertificate.read(path: keys.file("tool-key.key_secret"), needSecret: true).keyPair)
        XCTAssertEqual(try CurveCertificate.read(path: keys.file("tool-key.key")).publicKey, pair.publicKey)
        let again = try run([BuildProducts.path("shieldbus"), "keys", "new", "tool-key", "--directory", keys.path])
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.output.contains("exists already"), again.output)
        XCTAssertEqual(try CurveCertificate.read(path: keys.file("tool-key.key_secret"), needSecret: true).keyPair, pair, "the key was kept")
    }

    func testAnUnreadableAllowlistEntryNamesFileLineAndKey() throws {
        let broker = try BrokerProcess(configuration: "name: curve\nbus:\n  curve:\n    allow: [missing.key]\n",
                                       arguments: ["--endpoint", "tcp://127.0.0.1:*"], waitForReady: false)
        try waitUntil("the broker to refuse its configuration") { !broker.process.isRunning }
        XCTAssertEqual(broker.process.terminationStatus, 2, broker.log())
        XCTAssertTrue(broker.log().contains("config.yml:4:"), broker.log())
        XCTAssertTrue(broker.log().contains("bus.curve.allow[0]"), broker.log())
        XCTAssertTrue(broker.log().contains("missing.key"), broker.log())
    }

    func testPluginsAndToolsOfTheUserReachATCPBrokerWithTheLocalKey() throws {
        let work = TemporaryDirectory(prefix: "sbcurve")
        let broker = try BrokerProcess(configuration: """
            name: curve-plugin
            plugins:
              - {name: echo, executable: \(BuildProducts.path("bus-test-plugin")), arguments: [echo, \(work.file("echo.out")), app.echo, "0", "1"], role: generic, writable: ["\(work.path)"]}
            """, arguments: ["--endpoint", "tcp://127.0.0.1:*"])
        defer { broker.stop() }
        try waitUntil("the supervised plugin to connect over tcp") {
            try broker.status()["plugins"]?.arrayValue?.contains { $0["name"]?.stringValue == "echo" && $0["connected"]?.boolValue == true } == true
        }
        let output = try runShieldBus(["status", "--runtime-dir", broker.runtime.path, "--json"])
        XCTAssertTrue(output.contains("\"endpoint\":\"tcp://127.0.0.1:"), output)
        let modes = try fileModes(broker.runtime.path)
        XCTAssertEqual(modes["local.key_secret"], 0o600)
    }

    func testAbstractAndRemoteEndpointsAreRefused() throws {
        for (endpoint, expected) in [("ipc://@shieldbus-test", "abstract Unix socket"), ("tcp://0.0.0.0:5999", "not on this machine"),
                                     ("tcp://192.168.1.2:5999", "not on this machine"), ("udp://127.0.0.1:1", "neither ipc:// nor tcp://")] {
            let broker = try BrokerProcess(configuration: "name: refused\n", arguments: ["--endpoint", endpoint], waitForReady: false)
            waitUntil("the broker to refuse \(endpoint)") { !broker.process.isRunning }
            XCTAssertEqual(broker.process.terminationStatus, 2, broker.log())
            XCTAssertTrue(broker.log().contains(expected), broker.log())
        }
    }

    func testRuntimeAndStateFilesAreTheOwnersAlone() throws {
        let state = TemporaryDirectory(prefix: "sbstate")
        // What an earlier run under a looser umask left behind is tightened.
        chmod(state.path, 0o755)
        XCTAssertTrue(FileManager.default.createFile(atPath: state.file("device.sqlite-old"), contents: Data("x".utf8), attributes: [.posixPermissions: 0o644]))
        let journal = state.file("journal.jsonl")
        XCTAssertTrue(FileManager.default.createFile(atPath: journal, contents: nil, attributes: [.posixPermissions: 0o644]))
        let broker = try BrokerProcess(configuration: """
            name: modes
            appGroups:
              - {name: group.modes, slices: {}}
            """, arguments: ["--state-dir", state.path, "--journal", journal])
        defer { broker.stop() }
        let runtime = try fileModes(broker.runtime.path)
        XCTAssertEqual(runtime["."], 0o700)
        XCTAssertEqual(runtime["bus.sock"], 0o600, "the socket too")
        for (name, mode) in runtime where name != "." {
            XCTAssertEqual(mode & 0o077, 0, "\(name) in the runtime directory has mode \(String(mode, radix: 8))")
        }
        let stateModes = try fileModes(state.path, recursive: true)
        XCTAssertEqual(stateModes["."], 0o700)
        XCTAssertNotNil(stateModes["device.sqlite"])
        XCTAssertNotNil(stateModes["appgroups/group.modes/Library/Preferences/group.modes.sqlite"], "\(stateModes)")
        for (name, mode) in stateModes where name != "." {
            XCTAssertEqual(mode & 0o077, 0, "\(name) in the state folder has mode \(String(mode, radix: 8))")
        }
    }

    func testFoldersOthersCanWriteAreRefused() throws {
        let shared = TemporaryDirectory(prefix: "sbshared")
        chmod(shared.path, 0o777)
        for arguments in [["--state-dir", shared.path]] {
            let broker = try BrokerProcess(configuration: "name: shared\n", arguments: arguments, waitForReady: false)
            waitUntil("the broker to refuse the shared state folder") { !broker.process.isRunning }
            XCTAssertEqual(broker.process.terminationStatus, 1, broker.log())
            XCTAssertTrue(broker.log().contains("other users can write in it"), broker.log())
        }
        let broker = try BrokerProcess(configuration: "name: shared\n", runtimeDirectory: shared.path, waitForReady: false)
        waitUntil("the broker to refuse the shared runtime directory") { !broker.process.isRunning }
        XCTAssertEqual(broker.process.terminationStatus, 1, broker.log())
        XCTAssertTrue(broker.log().contains("runtime directory \(shared.path) has mode 777"), broker.log())
    }

    /// Another local user gets nothing: not the ipc socket, not the tcp bus without a key, not the state folder.
    func testAnotherLocalUserIsRefused() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") || FileManager.default.isExecutableFile(atPath: "/sbin/runuser") else {
            throw XCTSkip("needs root and runuser to act as another user (nobody)")
        }
        // The folders above the broker's must let `nobody` walk up to them, so that only the broker's own modes protect.
        let root = "/tmp/sbother-\(getpid())-\(UUID().uuidString.prefix(6))"
        XCTAssertEqual(mkdir(root, 0o755), 0)
        chmod(root, 0o755)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let ipc = try BrokerProcess(configuration: "name: other-user\nappGroups:\n  - {name: group.secret, slices: {}}\n",
                                    arguments: ["--state-dir", root + "/state"], runtimeDirectory: root + "/run")
        defer { ipc.stop() }
        let tcp = try BrokerProcess(configuration: "name: other-user-tcp\n", arguments: ["--endpoint", "tcp://127.0.0.1:*"],
                                    runtimeDirectory: root + "/run-tcp")
        defer { tcp.stop() }
        let tcpEndpoint = tcp.runtime.brokerEndpoint()
        let before = try errorCount(tcp, "curve-handshake-failed")

        // A raw client as nobody: the ipc socket, the tcp port without a key, and the state files.
        let outsider = try run(["runuser", "-u", "nobody", "--", BuildProducts.path("fixture-outsider"),
                                "--endpoint", ipc.runtime.defaultEndpoint, "--wait-ms", "1000",
                                "--read", root + "/state", root + "/state/device.sqlite", StatePaths.appGroupStore("group.secret", in: root + "/state"),
                                ipc.runtime.busSocketPath, ipc.runtime.endpointFilePath])
        XCTAssertEqual(outsider.status, 0, "nobody got something:\n\(outsider.output)")
        XCTAssertTrue(outsider.output.contains("refused \(root)/state: Permission denied"), outsider.output)
        let overTCP = try run(["runuser", "-u", "nobody", "--", BuildProducts.path("fixture-outsider"), "--endpoint", tcpEndpoint])
        XCTAssertEqual(overTCP.status, 0, "nobody got an answer over tcp:\n\(overTCP.output)")
        XCTAssertGreaterThan(try errorCount(tcp, "curve-handshake-failed"), before, "the broker saw and refused the attempt")

        // The tools say why, instead of "no broker answered".
        for broker in [ipc, tcp] {
            let status = try run(["runuser", "-u", "nobody", "--", BuildProducts.path("shieldbus"), "status", "--runtime-dir", broker.runtime.path])
            XCTAssertNotEqual(status.status, 0)
            XCTAssertTrue(status.output.contains("permission denied"), status.output)
            XCTAssertFalse(status.output.contains("no broker answered"), status.output)
        }
        // Both brokers kept serving their own user throughout.
        XCTAssertNotNil(try ipc.status()["broker"])
        XCTAssertNotNil(try tcp.status()["broker"])
    }

    /// A frame over ZMQ_MAXMSGSIZE closes the sender's connection before the broker allocates it.
    func testOversizedFrameIsCutBeforeAllocation() throws {
        let broker = try BrokerProcess(configuration: "name: big\nbus:\n  maxBodyBytes: 1024\n")
        defer { broker.stop() }
        let pid = try XCTUnwrap(broker.status()["broker"]?["pid"]?.intValue)
        let peakBefore = try peakResidentMegabytes(pid: Int32(pid))
        let context = try Context()
        let sender = try Socket(context, .dealer)
        try sender.setLinger(milliseconds: 0)
        let monitor = try SocketMonitor(sender, context: context, name: "oversized-\(UUID().uuidString.prefix(6))", events: SocketMonitor.disconnections)
        try sender.connect(broker.runtime.brokerEndpoint())
        let megabytes = 64
        try sender.send([Array("publish".utf8), [UInt8](repeating: 0x20, count: megabytes << 20)])
        var disconnected = false
        try waitUntil("the broker to close the connection of the oversized frame") {
            disconnected = try disconnected || monitor.pending().contains { $0.kind == .disconnected }
            return disconnected
        }
        let peak = try peakResidentMegabytes(pid: Int32(pid))
        XCTAssertLessThan(peak - peakBefore, Double(megabytes) / 4, "the broker's peak memory grew by the frame: it was read")
        XCTAssertNotNil(try broker.status()["broker"], "and it serves others")
        monitor.close()
    }

    // MARK: Helpers

    func peakResidentMegabytes(pid: Int32) throws -> Double {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try XCTUnwrap(Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? ""))
        return kilobytes / 1024
    }

    /// Modes of the folder (".") and of everything in it, by relative path.
    func fileModes(_ path: String, recursive: Bool = false) throws -> [String: Int] {
        var modes: [String: Int] = [:]
        var info = stat()
        guard lstat(path, &info) == 0 else { throw CocoaError(.fileNoSuchFile) }
        modes["."] = Int(info.st_mode & 0o777)
        let names = recursive ? (FileManager.default.subpaths(atPath: path) ?? []) : try FileManager.default.contentsOfDirectory(atPath: path)
        for name in names where lstat(path + "/" + name, &info) == 0 {
            modes[name] = Int(info.st_mode & 0o777)
        }
        return modes
    }

    @discardableResult
    func runShieldBus(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let result = try run([BuildProducts.path("shieldbus")] + arguments)
        XCTAssertEqual(result.status, 0, "shieldbus \(arguments.joined(separator: " ")): \(result.output)", file: file, line: line)
        return result.output
    }

    /// Runs a command to its end (a bare name is looked up in /usr/sbin, for runuser).
    func run(_ command: [String]) throws -> (status: Int32, output: String) {
        try runToEnd(command[0].hasPrefix("/") ? command[0] : "/usr/sbin/\(command[0])", Array(command.dropFirst()))
    }
}
