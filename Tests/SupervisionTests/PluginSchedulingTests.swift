import BusClient
import BusProtocol
import CProcessControl
import Foundation
import ShieldBusTestSupport
import XCTest

/// Each plugin's QoS class becomes the scheduling of its processes under a real clock, read from the kernel's own
/// record of each thread (`/proc/<pid>/task/<tid>/stat`), whether launched from its template or executed; and the
/// plugin cannot take back what its class gave up.
extension SupervisionTests {
    /// The nice value and scheduling policy of each thread of `pid` (`stat`'s fields 19 and 41), but those named
    /// `skipping`.
    func scheduling(ofThreadsOf pid: Int64, skipping: String? = nil) -> [(nice: Int, policy: Int)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { task in
            let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)
            if let skipping, name?.trimmingCharacters(in: .newlines) == skipping { return nil }
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // The fields after the command's closing parenthesis start at field 3 (the state).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 41 - 3, let nice = Int(fields[19 - 3]), let policy = Int(fields[41 - 3]) else { return nil }
            return (nice, policy)
        }
    }

    private func assertScheduling(of name: String, in broker: BrokerProcess, nice: Int, policy: Int32,
                                  file: StaticString = #filePath, line: UInt = #line) {
        let pid = waitConnected(name, in: broker, file: file, line: line)
        let threads = scheduling(ofThreadsOf: pid)
        XCTAssertFalse(threads.isEmpty, "\(name)'s threads could not be read", file: file, line: line)
        XCTAssertEqual(threads.map(\.nice), threads.map { _ in nice }, "\(name)'s nice value, every thread", file: file, line: line)
        XCTAssertEqual(threads.map(\.policy), threads.map { _ in Int(policy) }, "\(name)'s scheduling policy, every thread", file: file, line: line)
    }

    private var classedPlugins: [(name: String, extra: String)] {
        [("interactive", ", qos: userInteractive"), ("utility", ", qos: utility"), ("background", ", qos: background"), ("unclassed", "")]
    }

    func testEachPluginRunsAtItsQoSClassesScheduling() throws {
        for arguments in [[], ["--plain-launches"]] {  // forked from its template, and executed
            let broker = try BrokerProcess(configuration: configuration(classedPlugins), arguments: arguments)
            defer { broker.stop() }
            let brokerPID = Int64(broker.process.processIdentifier)
            // The classes lower from the broker's own (the test may itself run niced).
            let own = try XCTUnwrap(scheduling(ofThreadsOf: brokerPID).first).nice
            assertScheduling(of: "interactive", in: broker, nice: own, policy: SCHED_OTHER)
            assertScheduling(of: "utility", in: broker, nice: min(own + 10, 19), policy: SCHED_OTHER)
            assertScheduling(of: "background", in: broker, nice: 19, policy: SHIELDBUS_SCHED_IDLE)
            // A generic plugin's class is user-initiated unless it says otherwise: the broker's own scheduling.
            assertScheduling(of: "unclassed", in: broker, nice: own, policy: SCHED_OTHER)
            // Its threads that spawn at a lowered scheduling only spawn; those that do its work keep its own.
            let brokerThreads = scheduling(ofThreadsOf: brokerPID, skipping: "qos-spawner")
            XCTAssertEqual(brokerThreads.count, scheduling(ofThreadsOf: brokerPID).count - 2, "a spawner for utility and one for background")
            XCTAssertEqual(brokerThreads.map(\.nice), brokerThreads.map { _ in own }, "the broker's threads keep their scheduling")
            XCTAssertEqual(brokerThreads.map(\.policy), brokerThreads.map { _ in Int(SCHED_OTHER) })
        }
    }

    /// The kernel refuses an unprivileged raise of a nice value, and a way out of SCHED_IDLE; the sandbox gives no
    /// capability that would allow either.
    func testAPluginCannotRaiseTheSchedulingItsClassGaveIt() throws {
        let broker = try BrokerProcess(configuration: configuration(classedPlugins))
        defer { broker.stop() }
        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup.priority"])
        for name in ["utility", "background"] {
            let pid = waitConnected(name, in: broker)
            let before = scheduling(ofThreadsOf: pid)
            try tap.publish(Publish(topic: "app.sup.raise-priority", body: ["to": .string(name)]))
            let events = try collectEvents(from: tap) { $0.contains { $0.topic == "app.sup.priority" && $0.source == name } }
            let answer = try XCTUnwrap(events.first { $0.topic == "app.sup.priority" && $0.source == name }, "\(name) answered")
            XCTAssertNotEqual(answer.bodyValue["nice"]?.stringValue, "raised", "\(name): \(answer.bodyValue.jsonText)")
            if name == "background" {
                XCTAssertNotEqual(answer.bodyValue["policy"]?.stringValue, "normal", "\(name): \(answer.bodyValue.jsonText)")
            }
            let after = scheduling(ofThreadsOf: pid)
            XCTAssertEqual(after.map(\.nice), before.map(\.nice), "\(name) keeps the nice value it was given")
            XCTAssertEqual(after.map(\.policy), before.map(\.policy), "\(name) keeps the policy it was given")
        }
    }
}
