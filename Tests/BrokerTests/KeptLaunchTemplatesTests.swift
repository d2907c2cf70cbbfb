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

    /// The kept templates of a worker whose plugins (`names`) are each the supervision fixture, each launch of which
    /// waits 10 s for an answer to its hello on a socket no one listens on: a process that is still running when the
    /// next day starts.
    func keptTemplates(in directory: TemporaryDirectory, plugins names: [String]) throws -> KeptLaunchTemplates {
        let bubblewrap: String
        do { bubblewrap = try PluginSandbox.locateBubblewrap() } catch { throw XCTSkip("bwrap is not installed") }
        let runtime = RuntimeDirectory(path: directory.path + "/run"), state = directory.path + "/state"
        let busFolder = runtime.path + "/bus"
        for folder in [runtime.path, state, busFolder] + names.map({ state + "/containers/" + $0 }) {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let specs = names.map { name in
            PluginSpec(name: name, executable: BuildProducts.path("fixture-supervised"), arguments: ["--raw-hello", "{}"],
                       environment: ["HOME": state + "/containers/" + name], role: .generic,
                       files: PluginFiles(own: [state + "/containers/" + name], hidden: [state]))
        }
        return try KeptLaunchTemplates(specs: specs, runtimeDirectory: runtime, stateDirectory: state, endpoint: "ipc://" + busFolder + "/bus.sock",
                                       bubblewrap: bubblewrap)
    }

    /// The template's pid outside the sandbox: bwrap's child, the first process of the sandbox.
    func firstProcess(of template: LaunchTemplate) throws -> pid_t {
        let children = try String(contentsOfFile: "/proc/\(template.pid)/task/\(template.pid)/children", encoding: .utf8)
        return try XCTUnwrap(children.split(separator: " ").first.flatMap { pid_t($0) })
    }

    /// A worker of one plugin, `sup`.
    func worker(in directory: TemporaryDirectory) throws -> Worker {
        let kept = try keptTemplates(in: directory, plugins: ["sup"])
        addTeardownBlock { kept.end() }
        let template = try XCTUnwrap(kept.templates["sup"], "the fixture links the SDK: it serves as a template")
        let first = try firstProcess(of: template)
        let root = "/proc/\(first)/root"
        guard FileManager.default.isReadableFile(atPath: root + "/tmp") else { throw XCTSkip("the sandbox's root is not reachable through /proc (not root)") }
        return Worker(kept: kept, container: directory.path + "/state/containers/sup", root: root, first: first)
    }

    /// This process's children (zombies too: they are children until reaped).
    func childProcesses() -> Set<pid_t> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/self/task/\(task)/children", encoding: .utf8)) ?? "").split(separator: " ").compactMap { pid_t($0) }
        })
    }

    /// The template's process (bwrap, this process's child) has ended and was reaped: neither running nor a zombie.
    func assertReaped(_ template: LaunchTemplate, file: StaticString = #filePath, line: UInt = #line) {
        var status: Int32 = 0
        let waited = waitpid(template.pid, &status, WNOHANG), error = errno
        XCTAssertEqual(waited, -1, waited == 0 ? "the template still runs" : "the template was left a zombie", file: file, line: line)
        XCTAssertEqual(error, ECHILD, file: file, line: line)
    }

    func launch(_ worker: Worker) throws -> pid_t {
        try launch(worker.kept, "sup")
    }

    func launch(_ kept: KeptLaunchTemplates, _ name: String) throws -> pid_t {
        let template = try XCTUnwrap(kept.dayTemplates[name] ?? kept.templates[name])
        let environment = ["SHIELDBUS_ENDPOINT": kept.endpoint, "SHIELDBUS_PLUGIN_NAME": name, "HOME": kept.stateDirectory + "/containers/" + name]
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
        // The sandbox's /etc and /sys, which it bound from the runtime folder.
        XCTAssertTrue(FileManager.default.fileExists(atPath: worker.root + "/etc/passwd"), "the sandbox's /etc stays")
        for file in PluginSandbox.processorCountFiles where FileManager.default.fileExists(atPath: file) {
            XCTAssertEqual(try String(contentsOfFile: worker.root + file, encoding: .utf8), try String(contentsOfFile: file, encoding: .utf8), "the sandbox's /sys stays")
        }
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

    /// The templates are asked to reset at once and each answers for itself: one that does not answer (stopped) is
    /// retired alone, its process reaped, and the others serve the day.
    func testATemplateThatDoesNotAnswerItsResetIsRetiredAloneAndReaped() throws {
        let directory = TemporaryDirectory(prefix: "sbkept")
        let kept = try keptTemplates(in: directory, plugins: ["sup", "sup2"])
        addTeardownBlock { kept.end() }
        try kept.prepareDay()
        XCTAssertEqual(Set(kept.dayTemplates.keys), ["sup", "sup2"])
        // The first in the templates' order: were they asked one after another, the other would wait behind it.
        let (silentName, silent) = try XCTUnwrap(kept.templates.first)
        let answeringName = silentName == "sup" ? "sup2" : "sup"
        XCTAssertEqual(kill(try firstProcess(of: silent), SIGSTOP), 0)

        try kept.prepareDay(resetMilliseconds: 5_000)

        XCTAssertNil(kept.dayTemplates[silentName], "a template that did not answer its reset served the day")
        XCTAssertNotNil(kept.dayTemplates[answeringName], "a template that answered its reset was given up with a silent one")
        XCTAssertTrue(silent.isGone)
        assertReaped(silent)
        XCTAssertTrue(FileManager.default.fileExists(atPath: "/proc/\(try launch(kept, answeringName))"), "the day launches from the one that answered")
    }

    /// A template that cannot start (its log cannot be opened) ends those started before it: none is left running.
    func testAFailureStartingTheTemplatesEndsThoseStartedBeforeIt() throws {
        let directory = TemporaryDirectory(prefix: "sbkept")
        // A folder where the second plugin's log would be opened.
        try FileManager.default.createDirectory(atPath: directory.path + "/run/logs/sup2.log", withIntermediateDirectories: true)
        let before = childProcesses()
        XCTAssertThrowsError(try keptTemplates(in: directory, plugins: ["sup", "sup2"]))
        XCTAssertEqual(childProcesses().subtracting(before), [], "a template started before the failure was left running (or a zombie)")
    }

    /// A template that ended (killed, as one a day retired) is started again before the next day, in the same folders:
    /// that day launches from it, and the ended one was reaped.
    func testATemplateThatEndedIsStartedAgainForTheNextDay() throws {
        let directory = TemporaryDirectory(prefix: "sbkept")
        let kept = try keptTemplates(in: directory, plugins: ["sup", "sup2"])
        addTeardownBlock { kept.end() }
        try kept.prepareDay()
        let ended = try XCTUnwrap(kept.templates["sup"]), other = try XCTUnwrap(kept.templates["sup2"])
        XCTAssertEqual(kill(try firstProcess(of: ended), SIGKILL), 0)
        XCTAssertTrue(waitUntil("the template to end") { ended.hasEnded })

        kept.restartEnded()

        assertReaped(ended)
        let restarted = try XCTUnwrap(kept.templates["sup"], "the ended template was not started again")
        XCTAssertFalse(restarted === ended)
        XCTAssertTrue(kept.templates["sup2"] === other, "a template that still serves is kept as it is")
        try kept.prepareDay()
        XCTAssertTrue(kept.dayTemplates["sup"] === restarted, "the next day does not launch from the template started again")
        XCTAssertTrue(FileManager.default.fileExists(atPath: "/proc/\(try launch(kept, "sup"))"))
    }

    /// `ready`, `reset`, `ended` and `failed` are taken only from the template that said `ready`: another process
    /// writing on its channel (the template's end of it, taken with pidfd_getfd) is not heard.
    func testWhatAnotherProcessWritesOnATemplatesChannelIsNotTaken() throws {
        let directory = TemporaryDirectory(prefix: "sbkept")
        let worker = try worker(in: directory)
        try worker.kept.prepareDay()
        let template = try XCTUnwrap(worker.kept.dayTemplates["sup"])
        try writeOnChannel(of: worker.first, ["ended 2 0"])
        XCTAssertEqual(template.takeEndings().filter { $0.templatePID == 2 }.count, 0, "an ending told by another process was taken")
        try writeOnChannel(of: worker.first, ["failed 1"])
        let environment = ["SHIELDBUS_ENDPOINT": worker.kept.endpoint, "SHIELDBUS_PLUGIN_NAME": "sup", "HOME": worker.container]
        XCTAssertNotNil(template.launch(environment: environment, until: monotonicMilliseconds() + 10_000),
                        "a launch was refused by another process than the template")
        // With the template stopped, only the other process answers the next reset.
        XCTAssertEqual(kill(worker.first, SIGSTOP), 0)
        try writeOnChannel(of: worker.first, ["reset"])
        try worker.kept.prepareDay(resetMilliseconds: 1_000)
        XCTAssertNil(worker.kept.dayTemplates["sup"], "a reset answered by another process than the template was taken")
    }

    /// Sends `messages` on the launch channel of the template process `first`, from another process (python3): the
    /// template's end, taken with pidfd_getfd, which root may take from any process.
    func writeOnChannel(of first: pid_t, _ messages: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("python3 is not installed") }
        let script = """
            import ctypes, os, socket, sys
            libc = ctypes.CDLL(None, use_errno=True)
            process = os.pidfd_open(int(sys.argv[1]))
            taken = libc.syscall(438, process, int(sys.argv[2]), 0)  # pidfd_getfd
            if taken < 0: sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
            channel = socket.socket(fileno=taken)
            for message in sys.argv[3:]: channel.send(message.encode())
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, String(first), String(ChildProcess.launchChannelDescriptor)] + messages
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, said)
    }
}
