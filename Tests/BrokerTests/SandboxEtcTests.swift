@testable import Broker
import Foundation
import ShieldBusTestSupport
import XCTest

/// The sandbox's /etc (`SandboxEtc`): the files a program needs copied, links made again, the certificates' folders
/// mounted in it, and nothing else of the host's — its TLS keys least of all.
final class SandboxEtcTests: XCTestCase {
    func testTheViewHoldsWhatAProgramNeedsAndNoKeys() throws {
        let host = TemporaryDirectory(prefix: "sbetc"), runtime = TemporaryDirectory(prefix: "sbrt")
        let files = FileManager.default
        try "root:x:0:0::/root:/bin/sh\n".write(toFile: host.file("passwd"), atomically: false, encoding: .utf8)
        try "secret\n".write(toFile: host.file("shadow"), atomically: false, encoding: .utf8)
        try "include /etc/ld.so.conf.d/*.conf\n".write(toFile: host.file("ld.so.conf"), atomically: false, encoding: .utf8)
        try files.createSymbolicLink(atPath: host.file("localtime"), withDestinationPath: "/usr/share/zoneinfo/Europe/Berlin")
        for folder in ["ssl/private", "ssl/certs", "alternatives"] { try files.createDirectory(atPath: host.file(folder), withIntermediateDirectories: true) }
        try "key\n".write(toFile: host.file("ssl/private/host.key"), atomically: false, encoding: .utf8)
        try "[openssl]\n".write(toFile: host.file("ssl/openssl.cnf"), atomically: false, encoding: .utf8)

        try files.createDirectory(atPath: host.file("myapp"), withIntermediateDirectories: true)
        try "x\n".write(toFile: host.file("myapp/settings.conf"), atomically: false, encoding: .utf8)
        // A plugin given a path under /etc: an empty place for it in the view, which bwrap mounts the host's over.
        let view = try SandboxEtc.make(in: runtime.path, hostEtc: host.path, given: [host.file("myapp/settings.conf"), "/home/someone/file"])
        XCTAssertEqual(files.contents(atPath: view.path + "/myapp/settings.conf"), Data(), "a place, not a copy")
        try files.removeItem(atPath: view.path + "/myapp")
        XCTAssertEqual(view.path, runtime.path + "/sandbox-etc")
        XCTAssertEqual(files.contents(atPath: view.path + "/passwd"), files.contents(atPath: host.file("passwd")))
        XCTAssertEqual(try files.destinationOfSymbolicLink(atPath: view.path + "/localtime"), "/usr/share/zoneinfo/Europe/Berlin")
        XCTAssertEqual(files.contents(atPath: view.path + "/ssl/openssl.cnf"), files.contents(atPath: host.file("ssl/openssl.cnf")))
        XCTAssertEqual(try files.contentsOfDirectory(atPath: view.path).sorted(), ["alternatives", "localtime", "passwd", "ssl"],
                       "no shadow, no loader settings, nothing the host has that a program does not need")
        XCTAssertEqual(try files.contentsOfDirectory(atPath: view.path + "/ssl").sorted(), ["certs", "openssl.cnf"], "no private keys' folder")
        XCTAssertEqual(view.folders, ["ssl/certs", "alternatives"], "the host's folders that are there")
        XCTAssertEqual(view.arguments, ["--ro-bind", view.path, "/etc", "--ro-bind-try", host.path + "/ssl/certs", "/etc/ssl/certs",
                                        "--ro-bind-try", host.path + "/alternatives", "/etc/alternatives"])

        // Name services: only those that can answer inside the sandbox.
        try "passwd: files systemd\nhosts: files mdns4_minimal [NOTFOUND=return] dns\nprotocols: db files\n".write(
            toFile: host.file("nsswitch.conf"), atomically: false, encoding: .utf8)
        XCTAssertEqual(String(decoding: files.contents(atPath: try SandboxEtc.make(in: runtime.path, hostEtc: host.path).path + "/nsswitch.conf") ?? Data(), as: UTF8.self),
                       "passwd: files\nhosts: files dns\nprotocols: files\n")

        // Made afresh at the next run's start: a file gone from the host is gone from the view.
        try files.removeItem(atPath: host.file("passwd"))
        XCTAssertFalse(files.fileExists(atPath: try SandboxEtc.make(in: runtime.path, hostEtc: host.path).path + "/passwd"))
    }

    /// The sandbox's /sys: copies of the processor counts at their places, mounted as one folder read-only in place of
    /// a mount per file; nothing else of the host's /sys, and no /sys at all from a host without them.
    func testTheSystemViewHoldsTheProcessorCountsOnlyAndIsOneMount() throws {
        let host = TemporaryDirectory(prefix: "sbsys"), runtime = TemporaryDirectory(prefix: "sbrt")
        let files = FileManager.default
        try files.createDirectory(atPath: host.file("devices/system/cpu/cpu0"), withIntermediateDirectories: true)
        try "0-3\n".write(toFile: host.file("devices/system/cpu/possible"), atomically: false, encoding: .utf8)
        try "0-1\n".write(toFile: host.file("devices/system/cpu/online"), atomically: false, encoding: .utf8)
        try "x\n".write(toFile: host.file("devices/system/cpu/cpu0/online"), atomically: false, encoding: .utf8)
        try files.createDirectory(atPath: host.file("kernel"), withIntermediateDirectories: true)
        try "1\n".write(toFile: host.file("kernel/secret"), atomically: false, encoding: .utf8)
        let view = try SandboxEtc.make(in: runtime.path, hostEtc: host.path, hostSystem: host.path)
        XCTAssertEqual(view.systemPath, runtime.path + "/sandbox-sys")
        let system = try XCTUnwrap(view.systemPath)
        XCTAssertEqual(try files.subpathsOfDirectory(atPath: system).sorted(),
                       ["devices", "devices/system", "devices/system/cpu", "devices/system/cpu/online", "devices/system/cpu/possible"])
        XCTAssertEqual(files.contents(atPath: system + "/devices/system/cpu/possible"), Data("0-3\n".utf8))
        XCTAssertEqual(files.contents(atPath: system + "/devices/system/cpu/online"), Data("0-1\n".utf8))
        XCTAssertEqual(view.systemArguments, ["--ro-bind", system, "/sys"])

        // A plan with the view mounts it once, and none of the host's files.
        let spec = PluginSpec(name: "p", executable: "/bin/true", role: .generic)
        let arguments = PluginSandbox.Plan(spec: spec, runtimeDirectory: runtime.path, endpoint: "ipc://" + runtime.path + "/bus.sock",
                                           infoDescriptor: nil, seccompDescriptor: 3, etc: view).arguments
        XCTAssertEqual(arguments.filter { $0.hasPrefix("/sys") }, ["/sys"], "\(arguments)")
        let withoutView = PluginSandbox.Plan(spec: spec, runtimeDirectory: runtime.path, endpoint: "ipc://" + runtime.path + "/bus.sock",
                                             infoDescriptor: nil, seccompDescriptor: 3).arguments
        XCTAssertEqual(withoutView.filter { $0.hasPrefix("/sys") }.count, 2 * PluginSandbox.processorCountFiles.count, "\(withoutView)")

        // The machine's own, as glibc reads them (a sysfs file tells a size larger than it holds).
        let machine = try SandboxEtc.make(in: runtime.path)
        for file in PluginSandbox.processorCountFiles where files.fileExists(atPath: file) {
            XCTAssertEqual(try String(contentsOfFile: try XCTUnwrap(machine.systemPath) + file.dropFirst("/sys".count), encoding: .utf8),
                           try String(contentsOfFile: file, encoding: .utf8))
        }

        // A plugin given a path under /sys: no view (bwrap could not make the path's place in it), each count bound
        // on its own, and the path given after them.
        let givenSystem = try SandboxEtc.make(in: runtime.path, hostEtc: host.path, given: [host.file("kernel")], hostSystem: host.path)
        XCTAssertNil(givenSystem.systemPath)
        XCTAssertEqual(givenSystem.systemArguments, SandboxEtc.systemFileArguments)
        XCTAssertFalse(files.fileExists(atPath: runtime.path + "/sandbox-sys"), "no view left from before")
        let reading = PluginSpec(name: "p", executable: "/bin/true", role: .generic, files: .init(readable: ["/sys/class/net"]))
        let machineGiven = try SandboxEtc.make(in: runtime.path, given: reading.files.readable)
        let givenArguments = PluginSandbox.Plan(spec: reading, runtimeDirectory: runtime.path, endpoint: "ipc://" + runtime.path + "/bus.sock",
                                                infoDescriptor: nil, seccompDescriptor: 3, etc: machineGiven).arguments
        XCTAssertFalse(givenArguments.contains("/sys"), "\(givenArguments)")
        XCTAssertEqual(givenArguments.filter { $0.hasPrefix("/sys/devices") }.count, 2 * PluginSandbox.processorCountFiles.count, "\(givenArguments)")
        XCTAssertTrue(givenArguments.contains("/sys/class/net"), "\(givenArguments)")

        // Made afresh: a host without them shows no /sys.
        try files.removeItem(atPath: host.file("devices"))
        let bare = try SandboxEtc.make(in: runtime.path, hostEtc: host.path, hostSystem: host.path)
        XCTAssertNil(bare.systemPath)
        XCTAssertEqual(bare.systemArguments, SandboxEtc.systemFileArguments, "bwrap binds those the host has, here none")
        XCTAssertFalse(files.fileExists(atPath: runtime.path + "/sandbox-sys"))
    }

    /// A service that cannot answer inside the sandbox is dropped with its `[STATUS=action]` items (an action written
    /// with spaces, or with none before it, too); a database left with none is dropped; comments and other lines stay.
    func testNameServicesAreThoseThatCanAnswerInTheSandbox() {
        let host = """
            # /etc/nsswitch.conf
            passwd:         compat systemd   # users
            group:\tfiles\tsystemd
            hosts:          files mdns4_minimal [NOTFOUND=return] dns myhostname
            networks:       files
            netgroup:       nis
            ethers:         db [ NOTFOUND = return ] files
            protocols:      sss[NOTFOUND=return] files[NOTFOUND=continue] db

            """
        XCTAssertEqual(SandboxEtc.servicesAnswerable(inside: host), """
            # /etc/nsswitch.conf
            passwd: compat
            group: files
            hosts: files dns myhostname
            networks: files
            ethers: files
            protocols: files [NOTFOUND=continue]

            """)
    }

    /// The runtime and state folders are hidden outer first and made read-only after what the plugin is given in them,
    /// whichever holds the other: each is then a mount of its own when it is remounted (a folder that is not a mount
    /// cannot be, and bwrap would stop).
    func testTheHiddenFoldersAreMadeOuterFirstAndReadOnlyAfterTheirContents() {
        for (runtime, state) in [("/r/run", "/r/run/state"), ("/s/state/run", "/s/state"), ("/x/run", "/x/state")] {
            var spec = PluginSpec(name: "p", executable: "/bin/true", role: .generic)
            spec.files = PluginFiles(own: [state + "/containers/p"], hidden: [state])
            let arguments = PluginSandbox.Plan(spec: spec, runtimeDirectory: runtime, endpoint: "ipc://" + runtime + "/bus.sock",
                                               infoDescriptor: nil, seccompDescriptor: 3).arguments
            func position(_ option: String, _ path: String) -> Int? {
                arguments.indices.first { arguments[$0] == option && arguments[$0 + 1] == path }
            }
            let outer = [runtime, state].sorted { $0.count < $1.count }
            for folder in [runtime, state] {
                let tmpfs = position("--tmpfs", folder), readOnly = position("--remount-ro", folder)
                XCTAssertNotNil(tmpfs, "\(folder) hidden: \(arguments)")
                XCTAssertGreaterThan(readOnly ?? -1, position("--bind", state + "/containers/p") ?? .max, "\(folder) read-only after the container is shown")
                XCTAssertGreaterThan(readOnly ?? -1, position("--bind", runtime + "/bus.sock") ?? .max, "\(folder) read-only after the socket is shown")
            }
            XCTAssertLessThan(position("--tmpfs", outer[0])!, position("--tmpfs", outer[1])!, "\(runtime), \(state): the outer folder first")
        }
    }

    /// A sandbox kept across explored days shows the bus socket's folder, read-only, where each day's broker makes its
    /// socket anew (the socket itself, bound, would be the first day's): after the runtime folder is hidden, and before
    /// it is made read-only.
    func testAKeptSandboxShowsTheBusSocketsFolderReadOnlyInsteadOfTheSocket() {
        var spec = PluginSpec(name: "p", executable: "/bin/true", role: .generic)
        spec.files = PluginFiles(own: ["/w/state/containers/p"], hidden: ["/w/state"])
        let plan = { (kept: Bool) in
            PluginSandbox.Plan(spec: spec, runtimeDirectory: "/w/run", endpoint: "ipc:///w/run/bus/bus.sock", infoDescriptor: nil,
                               seccompDescriptor: 3, isKeptAcrossDays: kept).arguments
        }
        let kept = plan(true), run = plan(false)
        func position(_ arguments: [String], _ option: String, _ path: String) -> Int? {
            arguments.indices.first { arguments[$0] == option && arguments[$0 + 1] == path && arguments[$0 + 2] == path }
        }
        XCTAssertNotNil(position(run, "--bind", "/w/run/bus/bus.sock"), "a run's sandbox binds the socket: \(run)")
        XCTAssertNil(position(kept, "--bind", "/w/run/bus/bus.sock"), "\(kept)")
        let folder = position(kept, "--ro-bind", "/w/run/bus")
        XCTAssertNotNil(folder, "the socket's folder, read-only: \(kept)")
        func option(_ name: String, on path: String) -> Int? { kept.indices.first { kept[$0] == name && kept[$0 + 1] == path } }
        XCTAssertGreaterThan(folder ?? -1, option("--tmpfs", on: "/w/run") ?? .max, "shown after the runtime folder is hidden")
        XCTAssertLessThan(folder ?? .max, option("--remount-ro", on: "/w/run") ?? -1, "shown before it is made read-only")
        XCTAssertNil(position(run, "--ro-bind", "/w/run/bus"), "a run's sandbox shows no folder of the runtime folder")
        // Its message queues are shown, inside its /dev, so that its reset can remove those a day left.
        XCTAssertGreaterThan(option("--mqueue", on: "/dev/mqueue") ?? -1, option("--tmpfs", on: "/dev") ?? .max, "\(kept)")
        XCTAssertFalse(run.contains("--mqueue"), "a run's sandbox shows no message queues: \(run)")
    }
}
