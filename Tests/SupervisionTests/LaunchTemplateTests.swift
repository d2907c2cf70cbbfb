import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// Launches from a plugin's template process (a zygote started once in its sandbox, at the plugin's second launch,
/// forked per launch), through the real broker and real processes: a first launch is executed with no template
/// beside it; each launch from the template is a process of its own whose pid the broker knows across the sandbox's
/// pid namespace, whose crash and kill are told as before, and which a dead template does not take down for good.
extension SupervisionTests {

    /// The pid inside its sandbox (the last of `NSpid`) of a process the test sees; nil for one in the test's own pid
    /// namespace (bwrap).
    func sandboxPID(of pid: Int64) -> Int64? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("NSpid:") }) else { return nil }
        let pids = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().compactMap { Int64($0) }
        return pids.count > 1 ? pids.last : nil
    }

    /// A plugin's first launch is executed, the first process of its own sandbox, with no template beside it (a
    /// template pays only from a second launch on): kills it and waits for the second, which starts the template and
    /// is its first launch. The second's pid.
    func secondLaunch(of name: String, in broker: BrokerProcess, tap: BusConnection, ping n: Int64,
                                 file: StaticString = #filePath, line: UInt = #line) throws -> Int64 {
        let executed = waitConnected(name, in: broker, file: file, line: line)
        XCTAssertEqual(try ping(n, through: tap), 1, "a first launch is executed, its sandbox's first process", file: file, line: line)
        XCTAssertEqual(pluginProcesses(ofRuntimeDirectory: broker.runtime.path).compactMap { sandboxPID(of: Int64($0.pid)) }, [1],
                       "no template beside a first launch", file: file, line: line)
        waitUntil("\(name) to acknowledge everything", file: file, line: line) { plugin(name, in: broker)?["lag"]?.intValue == 0 }
        kill(Int32(executed), SIGKILL)
        return waitConnected(name, in: broker, notPid: executed, restarts: 1, file: file, line: line)
    }

    func testALaunchFromTheTemplateIsItsOwnProcessWhoseCrashAndKillAreTold() throws {
        let broker = try BrokerProcess(configuration: configuration([("forked", "")]))
        defer { broker.stop() }
        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup.", "plugin.", "bus.error"])
        let first = try secondLaunch(of: "forked", in: broker, tap: tap, ping: 1)
        XCTAssertEqual(plugin("forked", in: broker)?["lastExit"]?.stringValue, "killed by SIGKILL", "an executed launch's kill told")
        // The template is the first process of the sandbox's pid namespace; a launch is a later one. The broker's pid
        // for it (from the kernel, across the namespace) is that same process.
        let inside = try XCTUnwrap(try ping(2, through: tap))
        XCTAssertGreaterThan(inside, 1, "launched from the template, not executed as the namespace's first process")
        XCTAssertEqual(sandboxPID(of: first), inside, "status's pid is the launch's own process")

        waitUntil("forked to acknowledge everything") { plugin("forked", in: broker)?["lag"]?.intValue == 0 }
        kill(Int32(first), SIGKILL)
        let second = waitConnected("forked", in: broker, notPid: first, restarts: 2)
        XCTAssertEqual(plugin("forked", in: broker)?["lastExit"]?.stringValue, "killed by SIGKILL")
        XCTAssertFalse(processExists(Int32(first)))
        let again = try XCTUnwrap(try ping(3, through: tap))
        XCTAssertGreaterThan(again, 1, "launched from the same template")
        XCTAssertNotEqual(again, inside, "a new process")
        XCTAssertEqual(sandboxPID(of: second), again)

        waitUntil("forked to acknowledge everything") { plugin("forked", in: broker)?["lag"]?.intValue == 0 }
        // The event it crashed on is delivered once more, and the second crash on it gives it up (as for an executed plugin).
        try tap.publish(Publish(topic: "app.sup.crash", body: [:]))
        let events = try collectEvents(from: tap) { $0.contains { $0.bodyValue["code"]?.stringValue == "delivery-abandoned" } }
        XCTAssertEqual(events.filter { $0.topic == "plugin.exited" }.compactMap { $0.bodyValue["how"]?.stringValue },
                       ["exited with status 3", "exited with status 3"])
        waitConnected("forked", in: broker, notPid: second, restarts: 4)
        let entry = try XCTUnwrap(plugin("forked", in: broker))
        XCTAssertEqual(entry["lastExit"]?.stringValue, "exited with status 3")
        XCTAssertEqual(entry["lastError"]?.stringValue, "exited with status 3: forked: crashing, as asked", "the run's last words")
    }

    /// Launches that exit tell their template which pages of the program's code they had mapped; once three have, the
    /// template keeps mapped the pages at least two of them used, unmaps the file's others (its own start's), and gives
    /// the mapping a private page (a copy of its first), so that later forks copy exactly those entries — the
    /// program's own and its libraries', the Swift runtime's among them (a debug build maps about 150 regions).
    func testLaunchesThatExitTeachTheirTemplateThePagesOfCodeTheyUse() throws {
        #if arch(arm64)
        throw XCTSkip("on arm64 a template leaves code to fault (a mapping made writable would lose its branch-target protection)")
        #endif
        var system = utsname()
        uname(&system)
        let release = withUnsafeBytes(of: system.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let version = release.split(separator: ".").prefix(2).compactMap { Int($0.prefix { $0.isNumber }) }
        guard version.count == 2, (version[0], version[1]) >= (5, 14) else {
            throw XCTSkip("Linux \(release) has no MADV_POPULATE_READ: templates learn nothing")
        }
        let broker = try BrokerProcess(configuration: configuration([("forked", "")]))
        defer { broker.stop() }
        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup.", "plugin."])
        var launch = try secondLaunch(of: "forked", in: broker, tap: tap, ping: 1)
        let template = try XCTUnwrap(parentPID(of: launch))
        let program = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(template)/exe")
        let isSwiftRuntime = { (path: String) in path.hasSuffix("/libswiftCore.so") }
        let before = try XCTUnwrap(codeMapping(of: template) { $0 == program })
        XCTAssertEqual(before.anonymousKB, 0, "the template's code is the file's alone before any launch has exited")
        let runtimeBefore = codeMapping(of: template, isSwiftRuntime)
        // A page of code no launch runs, mapped in the template as its own start's are: the middle of the longest run
        // of the program's code the template has not mapped (a debug build's program holds megabytes of code that no
        // launch runs), read through the template's memory file.
        let unused = try XCTUnwrap(pageNoOneMapped(in: template, mapping: before.range), "a page of code nobody mapped")
        let memory = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(template)/mem"))
        try memory.seek(toOffset: unused)
        XCTAssertEqual(try memory.read(upToCount: 1)?.count, 1)
        try memory.close()
        XCTAssertEqual(pageMapped(unused, in: template), true, "the template maps the page it read")
        // Three launches exit (status 3, through exit()), each on an event of its own that the next one acknowledges.
        for n in Int64(1)...3 {
            waitUntil("forked to acknowledge everything") { plugin("forked", in: broker)?["lag"]?.intValue == 0 }
            XCTAssertEqual(codeMapping(of: template) { $0 == program }?.anonymousKB, 0, "nothing kept before three launches told")
            try tap.publish(Publish(topic: "app.sup.crash-once", body: ["n": .int(n)]))
            launch = waitConnected("forked", in: broker, notPid: launch, restarts: n + 1)
        }
        let after = try XCTUnwrap(codeMapping(of: template) { $0 == program })
        let pageKB = sysconf(Int32(_SC_PAGESIZE)) / 1024
        XCTAssertEqual(after.anonymousKB, pageKB, "one private page, so that forks copy the mapping's entries")
        XCTAssertGreaterThan(after.rssKB, 16 * pageKB, "the pages the launches used are mapped in the template")
        XCTAssertEqual(pageMapped(unused, in: template), false, "a page only the template used is not copied to every launch")
        if runtimeBefore != nil {  // a build that links the Swift runtime dynamically
            XCTAssertEqual(codeMapping(of: template, isSwiftRuntime)?.anonymousKB, pageKB, "the Swift runtime's code learnt too")
        }
    }

    /// Whether `address`'s page is mapped in process `pid` (its pagemap's present bit); nil when it cannot be read.
    private func pageMapped(_ address: UInt64, in pid: Int64) -> Bool? {
        let page = UInt64(sysconf(Int32(_SC_PAGESIZE)))
        guard let pagemap = FileHandle(forReadingAtPath: "/proc/\(pid)/pagemap") else { return nil }
        defer { try? pagemap.close() }
        guard (try? pagemap.seek(toOffset: address / page * 8)) != nil, let bytes = try? pagemap.read(upToCount: 8), bytes.count == 8 else { return nil }
        return bytes[7] & 0x80 != 0
    }

    /// The middle page of the longest run of unmapped pages in `range` of process `pid`, if that run is long enough
    /// that the kernel's fault-around (64 KB) of a neighbour cannot reach it.
    private func pageNoOneMapped(in pid: Int64, mapping range: Range<UInt64>) -> UInt64? {
        let page = UInt64(sysconf(Int32(_SC_PAGESIZE)))
        guard let pagemap = FileHandle(forReadingAtPath: "/proc/\(pid)/pagemap"),
              (try? pagemap.seek(toOffset: range.lowerBound / page * 8)) != nil,
              let entries = try? pagemap.read(upToCount: Int((range.upperBound - range.lowerBound) / page * 8)) else { return nil }
        try? pagemap.close()
        var best = (start: 0, count: 0), run = (start: 0, count: 0)
        for index in 0..<(entries.count / 8) {
            if entries[entries.startIndex + index * 8 + 7] & 0x80 != 0 {
                run = (index + 1, 0)
            } else {
                run.count += 1
                if run.count > best.count { best = run }
            }
        }
        guard best.count >= 64 else { return nil }
        return range.lowerBound + UInt64(best.start + best.count / 2) * page
    }

    private func parentPID(of pid: Int64) -> Int64? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ").dropFirst().first.flatMap { Int64($0) }
    }

    /// The addresses, resident and private sizes of a process's executable code mapping of the file `isFile` picks.
    private func codeMapping(of pid: Int64, _ isFile: (String) -> Bool) -> (range: Range<UInt64>, rssKB: Int, anonymousKB: Int)? {
        guard let smaps = try? String(contentsOfFile: "/proc/\(pid)/smaps", encoding: .utf8) else { return nil }
        var code: Range<UInt64>?, rss: Int?
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 6, fields[0].contains("-") {
                let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
                code = fields[1] == "r-xp" && fields.last.map { isFile(String($0)) } == true && bounds.count == 2 ? bounds[0]..<bounds[1] : nil
            } else if code != nil, fields.first == "Rss:" {
                rss = fields.dropFirst().first.flatMap { Int($0) }
            } else if let code, fields.first == "Anonymous:", let rss {
                return (code, rss, fields.dropFirst().first.flatMap { Int($0) } ?? -1)
            }
        }
        return nil
    }

    func testWhenTheTemplateDiesItsLaunchIsToldKilledAndTheNextLaunchIsAPlainOne() throws {
        let broker = try BrokerProcess(configuration: configuration([("forked", "")]))
        defer { broker.stop() }
        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup.", "plugin."])
        let first = try secondLaunch(of: "forked", in: broker, tap: tap, ping: 1)
        XCTAssertGreaterThan(try XCTUnwrap(try ping(2, through: tap)), 1)
        // The template: the plugin's process that is its sandbox's first.
        let template = try XCTUnwrap(pluginProcesses(ofRuntimeDirectory: broker.runtime.path).first { sandboxPID(of: Int64($0.pid)) == 1 }?.pid)
        XCTAssertNotEqual(Int64(template), first)
        kill(template, SIGKILL)
        let second = waitConnected("forked", in: broker, notPid: first, restarts: 2)
        XCTAssertEqual(plugin("forked", in: broker)?["lastExit"]?.stringValue, "killed by SIGKILL (its launch template ended)")
        XCTAssertEqual(try ping(3, through: tap), 1, "a plain launch: the first process of its own sandbox")
        XCTAssertEqual(sandboxPID(of: second), 1)
        XCTAssertTrue(broker.log(tail: 200).contains("a new template starts"), broker.log(tail: 20))
    }

    func testWithPlainLaunchesAskedThePluginIsExecutedAtEachLaunch() throws {
        let broker = try BrokerProcess(configuration: configuration([("forked", "")]), arguments: ["--plain-launches"])
        defer { broker.stop() }
        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup."])
        waitConnected("forked", in: broker)
        XCTAssertEqual(try ping(1, through: tap), 1, "executed as its sandbox's first process")
        let sandboxed = pluginProcesses(ofRuntimeDirectory: broker.runtime.path).compactMap { sandboxPID(of: Int64($0.pid)) }
        XCTAssertEqual(sandboxed, [1], "one process in the sandbox, its first: no template")
    }
}

extension SupervisionTests {
    /// A launch whose environment is larger than a template takes (256 KiB) is a plain one, never one cut short.
    func testALaunchTooLargeForTheTemplateIsAPlainOne() throws {
        let padding = String(repeating: "x", count: 100_000)
        let environment = (1...3).map { "BIG\($0): \(padding)" }.joined(separator: ", ")
        let broker = try BrokerProcess(configuration: configuration([("forked", ", environment: {\(environment)}")]))
        defer { broker.stop() }
        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup."])
        _ = try secondLaunch(of: "forked", in: broker, tap: tap, ping: 1)
        XCTAssertEqual(try ping(2, through: tap), 1, "executed as its sandbox's first process: \(broker.log(tail: 20))")
        XCTAssertTrue(broker.log(tail: 200).contains("this launch is a plain one"), broker.log(tail: 20))
        // The template is kept for the next launch: it and the plain launch are each the first of their own sandbox.
        let firsts = pluginProcesses(ofRuntimeDirectory: broker.runtime.path).filter { sandboxPID(of: Int64($0.pid)) == 1 }
        XCTAssertEqual(firsts.count, 2, "the template beside the plain launch: \(firsts)")
    }
}
