import AppGroupStore
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// `shieldbus state list|get|set|watch` on real stores, with and without a running broker.
final class StateCommandTests: XCTestCase {
    let group = "group.dev.shieldbus.focus"

    /// A state folder holding `group` (the monitor owns `quota*`) and a second, empty group.
    func makeState() throws -> (directory: TemporaryDirectory, container: AppGroupContainer) {
        let state = TemporaryDirectory(prefix: "sbstate")
        let container = AppGroupContainer(root: URL(fileURLWithPath: state.file("appgroups")))
        try container.createGroup(group)
        try container.declareSlices(group: group, ["monitor": ["quota*"]])
        try container.createGroup("group.dev.shieldbus.other")
        return (state, container)
    }

    func testListGetAndSetWithoutABroker() throws {
        let (state, container) = try makeState()
        let monitor = try SharedDefaults(suiteName: group, container: container, writer: "monitor",
                                         clock: { Date(timeIntervalSince1970: 1_795_400_000) })
        try monitor.set(["Instagram", "TikTok"], forKey: "quotaApps")
        try monitor.set(1_795_400_600.5, forKey: "quotaEnd")

        let list = try CommandRun.shieldbus(["state", "list", "--state-dir", state.path])
        XCTAssertEqual(list.status, 0, list.errors)
        let lines = list.output.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        XCTAssertTrue(lines.contains(["\(group)", "(2", "keys)"]), list.output)
        XCTAssertTrue(lines.contains(["KEY", "TYPE", "VERSION", "WRITER", "UPDATED", "VALUE"]), list.output)
        XCTAssertTrue(lines.contains(["quotaApps", "Array<String>", "1", "monitor", "2026-11-23T02:13:20.000Z", #"["Instagram","TikTok"]"#]), list.output)
        XCTAssertTrue(lines.contains(["group.dev.shieldbus.other", "(0", "keys)"]), list.output)

        let json = try JSONValue(parsing: try CommandRun.shieldbus(["state", "list", "--json", "--group", group, "--state-dir", state.path]).output)
        let entries = try XCTUnwrap(json["groups"]?.arrayValue?.first?["entries"]?.arrayValue)
        XCTAssertEqual(entries.map { $0["key"] }, ["quotaApps", "quotaEnd"])
        XCTAssertEqual(entries[1]["value"], .double(1_795_400_600.5))
        XCTAssertEqual(entries[1]["type"], "Double")
        XCTAssertEqual(entries[1]["updatedAt"], .int(1_795_400_000_000))

        let get = try CommandRun.shieldbus(["state", "get", "quotaApps", "--group", group, "--state-dir", state.path])
        XCTAssertEqual(get.output, #"["Instagram","TikTok"]"# + "\n")

        // The administrator writes any key (the monitor owns quota*), and a later read sees the new version.
        let set = try CommandRun.shieldbus(["state", "set", "quotaApps", #"["Instagram"]"#, "--group", group, "--state-dir", state.path,
                                            "--runtime-dir", state.file("no-broker")])
        XCTAssertEqual(set.status, 0, set.errors)
        XCTAssertEqual(set.output, "set quotaApps in \(group) (version 2); no broker running, so not announced\n")
        let entry = try XCTUnwrap(try monitor.entry(forKey: "quotaApps"))
        XCTAssertEqual(entry.writer, SharedDefaults.administrator)
        XCTAssertEqual(try monitor.value([String].self, forKey: "quotaApps"), ["Instagram"], "plugins read it with their own type")
        let getJSON = try JSONValue(parsing: try CommandRun.shieldbus(["state", "get", "quotaApps", "--json", "--group", group, "--state-dir", state.path]).output)
        XCTAssertEqual(getJSON["version"], 2)
        XCTAssertEqual(getJSON["writer"], "shieldbus")
        XCTAssertEqual(getJSON["value"], ["Instagram"])

        let scalar = try CommandRun.shieldbus(["state", "set", "unlockMinutes", "30", "--group", group, "--state-dir", state.path, "--runtime-dir", state.file("no-broker")])
        XCTAssertEqual(scalar.status, 0, scalar.errors)
        XCTAssertEqual(try monitor.entry(forKey: "unlockMinutes")?.typeTag, "Int", "scalars keep the tags plugins' writes carry")
    }

    func testMistakesSayWhatIsWrong() throws {
        let (state, _) = try makeState()
        let wrong = try CommandRun.shieldbus(["state", "get", "k", "--group", "group.dev.shieldbus.fcous", "--state-dir", state.path])
        XCTAssertNotEqual(wrong.status, 0)
        XCTAssertTrue(wrong.errors.contains("no app group named 'group.dev.shieldbus.fcous' exists"), wrong.errors)
        XCTAssertTrue(wrong.errors.contains("Did you mean 'group.dev.shieldbus.focus'? Existing app groups: group.dev.shieldbus.focus, group.dev.shieldbus.other."), wrong.errors)

        let ambiguous = try CommandRun.shieldbus(["state", "get", "k", "--state-dir", state.path])
        XCTAssertTrue(ambiguous.errors.contains("there are 2 app groups (group.dev.shieldbus.focus, group.dev.shieldbus.other); choose one with --group"), ambiguous.errors)

        let missing = try CommandRun.shieldbus(["state", "get", "nothing", "--group", group, "--state-dir", state.path])
        XCTAssertTrue(missing.errors.contains("app group '\(group)' has no value for 'nothing' (keys: none)"), missing.errors)

        let notJSON = try CommandRun.shieldbus(["state", "set", "k", "hello", "--group", group, "--state-dir", state.path])
        XCTAssertNotEqual(notJSON.status, 0)
        XCTAssertTrue(notJSON.errors.contains(#"the value must be JSON (quote text for the shell: '"hello"')"#), notJSON.errors)

        let empty = try CommandRun.shieldbus(["state", "list", "--state-dir", state.file("nowhere")])
        XCTAssertTrue(empty.errors.contains("no app groups in \(state.file("nowhere"))/appgroups"), empty.errors)
    }

    func testSetAnnouncesTheChangeOnTheBusLikeAPluginsWrite() throws {
        let broker = try BrokerProcess(configuration: "name: state\nappGroups:\n  - {name: \(group), slices: {}}\n")
        let tap = try broker.connect(name: "state-tap", subscriptions: ["state.changed"])
        // Without --state-dir the command uses the broker's default state folder, <runtime dir>/state.
        let set = try CommandRun.shieldbus(["state", "set", "unlockMinutes", "30", "--runtime-dir", broker.runtime.path])
        XCTAssertEqual(set.status, 0, set.errors)
        XCTAssertTrue(set.output.hasPrefix("set unlockMinutes in \(group) (version 1); announced as state.changed #"), set.output)
        let events = try collectEvents(from: tap) { !$0.isEmpty }
        XCTAssertEqual(events.first?.bodyValue, ["group": .string(group), "key": "unlockMinutes", "writer": "shieldbus", "version": 1, "removed": false],
                       "the body the SDK announces plugins' writes with")
        XCTAssertTrue(set.output.hasSuffix("#\(events.first?.seq ?? 0)\n"), set.output)
        let get = try CommandRun.shieldbus(["state", "get", "unlockMinutes", "--runtime-dir", broker.runtime.path])
        XCTAssertEqual(get.output, "30\n")
    }

    /// A broker run with its own `--state-dir`: `state` given only the runtime directory finds that folder, and shows
    /// the stores' times in the device's zone (Berlin: +01:00 in November), as the timeline does.
    func testTheRuntimeDirectoryLeadsToTheBrokersOwnStateFolderAndItsZone() throws {
        let state = TemporaryDirectory(prefix: "sbownstate")
        let broker = try BrokerProcess(configuration: "name: state\ntimeZone: Europe/Berlin\nappGroups:\n  - {name: \(group), slices: {}}\n",
                                       arguments: ["--state-dir", state.path])
        defer { broker.stop() }
        XCTAssertEqual(try CommandRun.shieldbus(["state", "set", "unlockMinutes", "30", "--runtime-dir", broker.runtime.path]).status, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: state.file("appgroups")), "written in the broker's own state folder")
        var listed = ""
        try waitUntil("the device to record its zone: \(listed)") {
            listed = try CommandRun.shieldbus(["state", "list", "--runtime-dir", broker.runtime.path]).output
            return listed.contains("unlockMinutes") && listed.contains("+01:00")
        }
        XCTAssertFalse(listed.contains("Z  "), "no UTC time beside the device's: \(listed)")
    }

    func testWatchPrintsEachChangeAsItIsCommitted() throws {
        let (state, container) = try makeState()
        let monitor = try SharedDefaults(suiteName: group, container: container, writer: "monitor")
        try monitor.set(1, forKey: "quotaBefore")  // committed before the watch: not shown
        let watch = try StartedCommand(BuildProducts.path("shieldbus"), ["state", "watch", "--json", "--count", "3", "--state-dir", state.path])
        waitUntil("the watch to start") { watch.errors.contains("watching \(group), group.dev.shieldbus.other in") }
        try monitor.set("09:00", forKey: "quotaStart")
        try monitor.removeObject(forKey: "quotaBefore")
        let other = try SharedDefaults(suiteName: "group.dev.shieldbus.other", container: container, writer: SharedDefaults.administrator)
        try other.set(true, forKey: "flag")
        let run = watch.finish()
        XCTAssertEqual(run.status, 0, run.errors)
        let changes = try run.output.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        XCTAssertEqual(changes.map { $0["key"] }, ["quotaStart", "quotaBefore", "flag"])
        XCTAssertEqual(changes[0]["value"], "09:00")
        XCTAssertEqual(changes[0]["writer"], "monitor")
        XCTAssertEqual(changes[1]["removed"], true)
        XCTAssertEqual(changes[1]["version"], 2)
        XCTAssertNil(changes[1]["value"])
        XCTAssertEqual(changes[2]["group"], "group.dev.shieldbus.other")
    }

    func testWatchAsTextShowsTheValueWritten() throws {
        let (state, container) = try makeState()
        let watch = try StartedCommand(BuildProducts.path("shieldbus"), ["state", "watch", "--count", "1", "--group", group, "--state-dir", state.path])
        waitUntil("the watch to start") { watch.errors.contains("watching \(group) in") }
        try SharedDefaults(suiteName: group, container: container, writer: "monitor", clock: { Date(timeIntervalSince1970: 1_795_400_000) })
            .set(45, forKey: "quotaMinutes")
        XCTAssertEqual(watch.finish().output, "2026-11-23T02:13:20.000Z  \(group)  quotaMinutes  v1 by monitor  = 45\n")
    }
}
