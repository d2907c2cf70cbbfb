// Release programs link libzmq.a without the Kerberos libraries (CZeroMQWithoutGSSAPI): none loads them, and a peer
// proposing GSSAPI is refused at its greeting, never reaching the functions that stand in for them.
import BusClient
import Foundation
import ShieldBusTestSupport
import XCTest

final class WithoutGSSAPITests: XCTestCase {
    /// What CZeroMQWithoutGSSAPI writes before it aborts.
    static let refusalMarker = "linked without the GSSAPI security mechanism"
    static let kerberosLibraries = ["libgssapi_krb5.so", "libkrb5.so", "libk5crypto.so", "libkrb5support.so", "libcom_err.so"]

    /// Every program of this build, and of the release build when it is newer than the link's sources: no Kerberos
    /// library among those it names itself (a debug program loads the shared libzmq, which brings its own; a release
    /// program links libzmq's archive, and it is the one that must not). `make bench-build` refuses such a release
    /// program too (`check_release_archives`).
    func testNoProgramNeedsTheKerberosLibraries() throws {
        var checked: [String] = []
        let release = Self.programs(in: Self.releaseFolder).compactMap { program in
            try? BuildProducts.currentRelease(URL(fileURLWithPath: program).lastPathComponent, builtFrom: Self.linkSources).get()
        }
        for programs in [Self.programs(in: BuildProducts.directory), release] {
            for program in programs {
                let needed = try Self.neededLibraries(program)
                XCTAssertTrue(needed.contains { $0.hasPrefix("libc.so") }, "\(program): readelf found no NEEDED entries to check: \(needed)")
                XCTAssertEqual(needed.filter { name in Self.kerberosLibraries.contains { name.hasPrefix($0) } }, [], program)
                checked.append(program)
            }
        }
        XCTAssertTrue(checked.contains { $0.hasSuffix("/shieldbus") }, "no shieldbus among the programs checked: \(checked)")
    }

    /// A process of the user that speaks raw ZMTP 3 to the bus socket and proposes GSSAPI is disconnected at its
    /// greeting (perhaps after part of the broker's own); the broker serves others after it, and nothing called a
    /// refusal (which would have aborted it). Against the release broker too when it is current: only it links them.
    func testAPeerProposingGSSAPIIsRefusedAtItsGreeting() throws {
        var programs: [String?] = [nil]
        if case .success(let release) = BuildProducts.currentRelease("shieldbus", builtFrom: Self.linkSources) { programs.append(release) }
        for program in programs {
            let broker = try BrokerProcess(configuration: "name: gssapi-peer\n", program: program)
            defer { broker.stop() }
            let endpoint = broker.runtime.brokerEndpoint()
            XCTAssertTrue(endpoint.hasPrefix("ipc://"), endpoint)
            let path = String(endpoint.dropFirst("ipc://".count))
            // The same greeting naming NULL, the bus socket's own mechanism, is answered with the broker's whole
            // greeting: what closes the others is the mechanism they name.
            let control = try Self.greet(path: path, mechanism: "NULL", readingUpTo: 64)
            XCTAssertFalse(control.closed, "the broker closed a NULL peer's connection at its greeting: \(control.bytes)")
            XCTAssertEqual(control.bytes.count, 64, "the broker's greeting: \(control.bytes)")
            Self.assertGreeting(control.bytes)
            for _ in 0..<3 {
                let answer = try Self.greet(path: path, mechanism: "GSSAPI")
                XCTAssertTrue(answer.closed, "the broker kept the connection of a GSSAPI peer open: \(answer.bytes)")
                Self.assertGreeting(answer.bytes)
            }
            XCTAssertNotNil(try broker.status()["broker"], "the broker serves others after the GSSAPI peers (log: \(broker.log()))")
            XCTAssertTrue(broker.process.isRunning, broker.log())
            XCTAssertFalse(broker.log(tail: 10_000).contains(Self.refusalMarker), broker.log())
        }
    }

    // MARK: Helpers

    static var releaseFolder: URL { BuildProducts.repositoryRoot.appendingPathComponent(".build/release") }

    /// What decides whether a release program links the Kerberos libraries: one built before a change to them is stale.
    static let linkSources = ["Package.swift", "Sources/CZeroMQWithoutGSSAPI/without_gssapi.c"]

    /// ZMTP 3's signature: 0xFF, eight bytes of padding, 0x7F.
    static let signature: [UInt8] = [0xFF] + [UInt8](repeating: 0, count: 8) + [0x7F]

    /// What came of the broker's greeting before the close (the close may come first): its signature's ends, and
    /// NULL, the bus socket's mechanism on ipc.
    static func assertGreeting(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        if bytes.count >= 10 {
            XCTAssertEqual([bytes[0], bytes[9]], [0xFF, 0x7F], "not a ZMTP greeting: \(bytes)", file: file, line: line)
        }
        if bytes.count >= 32 {
            XCTAssertEqual(Array(bytes[12..<32]), mechanismField("NULL"), "the broker's mechanism on ipc: \(bytes)", file: file, line: line)
        }
    }

    static func mechanismField(_ name: String) -> [UInt8] { Array(name.utf8) + [UInt8](repeating: 0, count: 20 - name.utf8.count) }

    /// Connects to the Unix socket at `path`, sends a 64-byte ZMTP 3.0 greeting naming `mechanism` (as a client), and
    /// reads what comes back until the other side closes, `limit` bytes came, or 10 s pass.
    static func greet(path: String, mechanism: String, readingUpTo limit: Int = .max) throws -> (bytes: [UInt8], closed: Bool) {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw POSIXError(.ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let greeting = signature + [3, 0] + mechanismField(mechanism) + [0] + [UInt8](repeating: 0, count: 31)
        precondition(greeting.count == 64)
        guard greeting.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == 64 else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(10)
        var buffer = [UInt8](repeating: 0, count: 256)
        while Date() < deadline && received.count < limit {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (received, true) }  // closed (or reset) by the broker
            received += buffer.prefix(min(count, limit - received.count))
        }
        return (received, false)
    }

    /// The program files (ELF executables) at the top of a build folder; none when it does not exist.
    static func programs(in folder: URL) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        return names.sorted().map { folder.appendingPathComponent($0).path }.filter { path in
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
                  FileManager.default.isExecutableFile(atPath: path), !path.hasSuffix(".so"),
                  let handle = FileHandle(forReadingAtPath: path) else { return false }
            defer { try? handle.close() }
            return (try? handle.read(upToCount: 4)) == Data([0x7F, 0x45, 0x4C, 0x46])
        }
    }

    /// The libraries a program names itself (its dynamic section's NEEDED entries), as `readelf -d` shows them.
    static func neededLibraries(_ program: String) throws -> [String] {
        let result = try runToEnd("/usr/bin/readelf", ["-d", "--wide", program])
        XCTAssertEqual(result.status, 0, "readelf -d \(program): \(result.output)")
        return result.output.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            guard let open = line.lastIndex(of: "["), let close = line.lastIndex(of: "]"), open < close else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }
}
