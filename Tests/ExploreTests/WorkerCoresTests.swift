@testable import Explore
import Foundation
import ShieldBusTestSupport
import XCTest

/// Explore holds each worker on one processor: its broker template is started there, and what the template starts
/// — the worker's kept sandboxes and launch templates, and from them each day's broker and plugins — inherits it.
/// Read from the kernel (`Cpus_allowed_list` of every process and thread), not from timing.
final class WorkerCoresTests: XCTestCase {
    static let root = BuildProducts.repositoryRoot.path

    /// The processors a `Cpus_allowed_list` names, e.g. `0-2,5` → [0, 1, 2, 5].
    static func processors(inList list: String) -> [Int32] {
        list.split(separator: ",").flatMap { range -> [Int32] in
            let ends = range.split(separator: "-").compactMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
            return ends.count == 2 ? Array(ends[0]...ends[1]) : ends
        }
    }

    /// A process's or thread's `Cpus_allowed_list` (its `status` file), nil once it has ended.
    static func allowedList(_ statusPath: String) -> String? {
        guard let status = try? String(contentsOfFile: statusPath, encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }
            .map { $0.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces) }
    }

    /// `pid` and every process it started (and they started), each with its threads: status path → allowed list.
    static func placements(ofTree pid: pid_t) -> [String: String] {
        var found: [String: String] = [:]
        var pending = [pid]
        while let next = pending.popLast() {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(next)/task")) ?? []
            for task in tasks {
                let path = "/proc/\(next)/task/\(task)/status"
                if let list = allowedList(path) { found[path] = list }
                let children = (try? String(contentsOfFile: "/proc/\(next)/task/\(task)/children", encoding: .utf8)) ?? ""
                pending += children.split(separator: " ").compactMap { pid_t($0) }
            }
        }
        return found
    }

    func testWorkersTakeTheAllowedProcessorsInTurn() {
        let cores = WorkerCores(cores: [2, 5])
        XCTAssertEqual((0..<5).map { cores.core(ofWorker: $0) }, [2, 5, 2, 5, 2])
        XCTAssertNil(WorkerCores.none.core(ofWorker: 0))
    }

    func testTheProcessorsAreTheOnesThisProcessMayRunOnUnlessTurnedOff() throws {
        let own = try XCTUnwrap(Self.allowedList("/proc/self/status"))
        XCTAssertEqual(WorkerCores.allowed(environment: [:]).cores, Self.processors(inList: own))
        XCTAssertEqual(WorkerCores.allowed(environment: [WorkerCores.noPinVariable: "1"]), .none)
        XCTAssertEqual(WorkerCores.allowed(wanted: false, environment: [:]), .none)
        XCTAssertEqual(WorkerCores.allowed(wanted: true, environment: [WorkerCores.noPinVariable: "1"]).cores, Self.processors(inList: own))
    }

    /// The worker's template, its kept sandboxes and their launch templates — every process and thread of the tree — run
    /// on the worker's processor only (the last this test may run on: under a cpuset it need not be the first); a
    /// template without one runs where this process may.
    func testAWorkersTemplateAndItsKeptSandboxesRunOnItsProcessorOnly() throws {
        let own = try XCTUnwrap(Self.allowedList("/proc/self/status"))
        let core = try XCTUnwrap(Self.processors(inList: own).last)
        for held in [true, false] {
            let directory = TemporaryDirectory(prefix: "sbcores")
            let templates = BrokerTemplates(executable: BuildProducts.path("shieldbus"), configurationPath: Self.root + "/Config/habit-lock.yml",
                                            workDirectory: directory.path, cores: held ? WorkerCores(cores: [core]) : .none)
            defer { templates.stopAll() }
            let template = templates.take()
            XCTAssertEqual(template.core, held ? core : nil)
            XCTAssertTrue(template.keepsSandboxes, "the template serves, keeping its worker's sandboxes")
            let pid = try XCTUnwrap(template.servingProcess)
            let placements = Self.placements(ofTree: pid)
            // The template, and for each of the six plugins its bwrap, the sandbox's first process and more.
            XCTAssertGreaterThan(Set(placements.keys.map { $0.split(separator: "/")[1] }).count, 6, "\(placements)")
            let expected = held ? "\(core)" : own
            XCTAssertEqual(placements.filter { $0.value != expected }, [:], "every process and thread of the worker runs on \(expected)")
        }
    }
}
