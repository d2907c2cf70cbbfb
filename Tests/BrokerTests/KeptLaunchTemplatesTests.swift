@testable import Broker
import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// An explore worker's sandboxes and launch templates, kept across its days: each day starts with none of the last
/// day's processes, files, System V objects or message queues, in the same folders and the same template.
final class KeptLaunchTemplatesTests: XCTestCase {
    struct Worker {
        let kept: KeptLaunchTemplates
        let container: String
        /// The sandbox's root as the template sees it (`/proc/<pid>/root`).
        let root: String
        /// The template's pid outside the sandbox.
        let first: pid_t
    }

    /// Runs `arguments` in the sandbox's ipc namespace (`nsenter`): its standard output.
    func inIPCNamespace(of worker: Worker, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/nsenter")
        process.arguments = ["--ipc=/proc/\(worker.first)/ns/ipc", "--"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(arguments)")
        return text
    }

    /// The ids of the sandbox's System V objects of a kind (`ipcs -m`, `-q`, `-s`).
    func systemVObjects(of worker: Worker, _ kind: String) throws -> [String] {
        try inIPCNamespace(of: worker, ["ipcs", kind]).split(separator: "\n").filter { $0.hasPrefix("0x") }.map(String.init)
    }

    /// A worker whose one plugin is the supervision fixture, each launch of which waits 10 s for an answer to its
    /// hello on a socket no one listens on: a process that is still running when the next day starts.
    func worker(in directory: TemporaryDirectory) throws -> Worker {
        let bubblewrap: String
        do { bubblewrap = try PluginSandbox.locateBubblewrap() } catch { throw XCTSkip("bwrap is not installed") }
        let runtime = RuntimeDirectory(path: directory.path + "/run"), state = directory.path + "/state"
        let container = state + "/containers/sup", busFolder = runtime.path + "/bus"
        for folder in [runtime.path, state, container, busFolder] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let spec = PluginSpec(name: "sup", executable: BuildProducts.path("fixture-supervised"), arguments: ["--raw-hello", "{}"],
                              environment: ["HOME": container], role: .generic,
                              files: PluginFiles(own: [container], hidden: [state]))
        let kept = try KeptLaunchTemplates(specs: [spec], runtimeDirectory: runtime, stateDirectory: state, endpoint: "ipc://" + busFolder + "/bus.sock",
                                           bubblewrap: bubblewrap)
        addTeardownBlock { kept.end() }
        let template = try XCTUnwrap(kept.templates["sup"], "the fixture links the SDK: it serves as a template")
        // The template is bwrap's child, the first process of the sandbox.
        let children = try String(contentsOfFile: "/proc/\(template.pid)/task/\(template.pid)/children", encoding: .utf8)
        let first = try XCTUnwrap(children.split(separator: " ").first.flatMap { pid_t($0) })
        let root = "/proc/\(first)/root"
        guard FileManager.default.isReadableFile(atPath: root + "/tmp") else { throw XCTSkip("the sandbox's root is not reachable through /proc (not root)") }
        return Worker(kept: kept, container: container, root: root, first: first)
    }

    func launch(_ worker: Worker) throws -> pid_t {
        let template = try XCTUnwrap(worker.kept.dayTemplates["sup"] ?? worker.kept.templates["sup"])
        let environment = ["SHIELDBUS_ENDPOINT": worker.kept.endpoint, "SHIELDBUS_PLUGIN_NAME": "sup", "HOME": worker.container]
        return try XCTUnwrap(template.launch(environment: environment, until: monotonicMilliseconds() + 10_000)).pid
    }

    func testADayStartsWithNoneOfTheLastDaysProcessesFilesOrSystemVObjectsInTheSameFoldersAndTemplate() throws {
        let directory = TemporaryDirectory(prefix: "sbkept")
        let worker = try worker(in: directory)
        try worker.kept.prepareDay()
        let lingering = try launch(worker)
        XCTAssertTrue(FileManager.default.fileExists(atPath: "/proc/\(lingering)"), "the last day's launch still runs")
        // What a day's processes leave: in the sandbox's own memory, in the folders it binds, and in its ipc namespace.
        let made = ["/tmp/left", "/tmp/folder/nested/left", "/dev/shm/left", "/left-at-the-root"]
        try FileManager.default.createDirectory(atPath: worker.root + "/tmp/folder/nested", withIntermediateDirectories: true)
        for path in made { XCTAssertTrue(FileManager.default.createFile(atPath: worker.root + path, contents: Data("day 1".utf8)), path) }
        // A file made in /dev/mqueue is a POSIX message queue of the sandbox's ipc namespace (made in place: the
        // file system renames nothing).
        let queue = "/dev/mqueue/left"
        let descriptor = open(worker.root + queue, O_CREAT | O_RDWR, 0o600)
        XCTAssertGreaterThanOrEqual(descriptor, 0, "a message queue made in the sandbox: errno \(errno)")
        close(descriptor)
        XCTAssertTrue(FileManager.default.createFile(atPath: worker.container + "/Library", contents: Data("day 1".utf8)))
        let containerInode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: worker.container)[.systemFileNumber] as? Int)
        // A plugin that took its own write permission from its container: given back, so that it can be emptied.
        XCTAssertEqual(chmod(worker.container, 0o500), 0)
        try FileManager.default.createDirectory(atPath: directory.path + "/state/appgroups/group.old", withIntermediateDirectories: true)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/nsenter") else { throw XCTSkip("nsenter is not installed") }
        for kind in ["-M", "-Q", "-S"] { _ = try inIPCNamespace(of: worker, ["ipcmk", kind, "1"]) }
        for kind in ["-m", "-q", "-s"] { XCTAssertEqual(try systemVObjects(of: worker, kind).count, 1, "made in the sandbox: \(kind)") }

        try worker.kept.prepareDay()

        for kind in ["-m", "-q", "-s"] { XCTAssertEqual(try systemVObjects(of: worker, kind), [], "outlived its day: \(kind)") }
        XCTAssertNotNil(worker.kept.dayTemplates["sup"], "the template was reset, not given up")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/proc/\(lingering)/cmdline"), "the last day's launch was killed and reaped")
        for path in made + [queue] { XCTAssertFalse(FileManager.default.fileExists(atPath: worker.root + path), "\(path) outlived its day") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: worker.root + "/tmp/folder"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: worker.root + "/dev/null"), "what the sandbox was made with stays")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: worker.container), [], "the container is emptied")
        XCTAssertEqual(try XCTUnwrap(FileManager.default.attributesOfItem(atPath: worker.container)[.posixPermissions] as? Int) & 0o700, 0o700,
                       "the owner's permissions on the container are given back")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: worker.container)[.systemFileNumber] as? Int, containerInode,
                       "the container is the folder the sandbox bound, not a new one")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path + "/state/appgroups"), "what no sandbox binds is removed")
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.path + "/run/bus"), "the bus socket's folder stays")
        // The next day launches from the same template.
        let next = try launch(worker)
        XCTAssertTrue(FileManager.default.fileExists(atPath: "/proc/\(next)"))
    }

    /// A worker's first day, then `change` made to its sandbox by that day: the next day must not use its template
    /// (which ends; the day starts its own).
    func assertNotUsedAgain(after what: String, file: StaticString = #filePath, line: UInt = #line, _ change: (Worker) throws -> Void) throws {
        let directory = TemporaryDirectory(prefix: "sbkept")
        let worker = try worker(in: directory)
        try worker.kept.prepareDay()
        XCTAssertNotNil(worker.kept.dayTemplates["sup"], file: file, line: line)
        try change(worker)
        try worker.kept.prepareDay()
        XCTAssertNil(worker.kept.dayTemplates["sup"], "a template whose sandbox \(what) served another day", file: file, line: line)
        XCTAssertTrue(try XCTUnwrap(worker.kept.templates["sup"], file: file, line: line).isGone, file: file, line: line)
    }

    /// A sandbox that cannot be brought back as it was made (a link of its root replaced) is not used again: its
    /// template ends, and the day starts its own.
    func testATemplateWhoseSandboxWasChangedIsNotUsedAgain() throws {
        try assertNotUsedAgain(after: "changed") { worker in
            let link = worker.root + "/bin"
            let target = try FileManager.default.destinationOfSymbolicLink(atPath: link)
            try FileManager.default.removeItem(atPath: link)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        }
    }

    /// A folder the sandbox was made with whose permissions a day changed (it cannot be seen as missing: it is the
    /// same inode) is not used again either.
    func testATemplateWhoseSandboxHasAFolderWithOtherPermissionsIsNotUsedAgain() throws {
        try assertNotUsedAgain(after: "had a folder's permissions changed") { worker in
            // A folder of the sandbox's own root (not a mount of its own: on the root's device).
            var rootStatus = stat(), status = stat()
            XCTAssertEqual(lstat(worker.root + "/", &rootStatus), 0)
            let folder = try FileManager.default.contentsOfDirectory(atPath: worker.root + "/").sorted().map { worker.root + "/" + $0 }.first {
                lstat($0, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR && status.st_dev == rootStatus.st_dev
            }
            let changed = try XCTUnwrap(folder, "the sandbox's root holds a folder of its own")
            XCTAssertEqual(lstat(changed, &status), 0)
            XCTAssertEqual(chmod(changed, (status.st_mode & 0o7777) ^ 0o002), 0, changed)
        }
    }

    /// A file the sandbox was made with, given another name by a day (it is the same inode, with the same permissions
    /// and contents), is not used again: a day could otherwise hand something to the next under a name of its own.
    func testATemplateWhoseSandboxHadAFileMovedIsNotUsedAgain() throws {
        try assertNotUsedAgain(after: "had a file moved") { worker in
            XCTAssertEqual(rename(worker.root + "/dev/stdin", worker.root + "/dev/shm/moved"), 0, "errno \(errno)")
        }
    }

    /// A folder's times set by a day are given back at the reset, its own mount's root as any other: the template
    /// serves the next day, and nothing of the day is left in them.
    func testAFoldersTimesAreGivenBackAtAReset() throws {
        let directory = TemporaryDirectory(prefix: "sbkept")
        let worker = try worker(in: directory)
        try worker.kept.prepareDay()
        var before = stat(), after = stat()
        XCTAssertEqual(lstat(worker.root + "/tmp", &before), 0)
        var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, worker.root + "/tmp", &times, 0), 0, "errno \(errno)")
        XCTAssertTrue(FileManager.default.createFile(atPath: worker.root + "/tmp/left", contents: Data("day 1".utf8)))
        try worker.kept.prepareDay()
        XCTAssertNotNil(worker.kept.dayTemplates["sup"], "a folder's times are given back, not a reason to give the sandbox up")
        XCTAssertEqual(lstat(worker.root + "/tmp", &after), 0)
        XCTAssertEqual(after.st_mtim.tv_sec, before.st_mtim.tv_sec)
        XCTAssertEqual(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec)
        XCTAssertEqual(after.st_atim.tv_sec, before.st_atim.tv_sec)
        XCTAssertFalse(FileManager.default.fileExists(atPath: worker.root + "/tmp/left"))
    }
}
