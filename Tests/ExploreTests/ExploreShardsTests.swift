import BusProtocol
@testable import Explore
import Foundation
import XCTest

/// Shards and their merge as pure logic, on results made here (the fast lane): the partition of the seeds, the shard a
/// batch engine's environment names, the merge's identity with one machine's report, and every refusal.
/// `ExploreTests.testTwoShardsMergedAreTheOneMachineReportByteForByte` does it through the real CLI.
final class ExploreShardsTests: XCTestCase {
    // MARK: The partition

    func testEverySeedIsInExactlyOneShardAndShardsDifferByAtMostOneSeed() throws {
        for firstSeed: UInt64 in [1, 41, UInt64.max - 3] {
            for days in 0...13 {
                let all = (0..<UInt64(days)).map { firstSeed &+ $0 }
                for count in 1...5 {
                    let shards = try (1...count).map { try ExploreShard(index: $0, count: count, source: "test") }
                    let parts = shards.map { $0.seeds(firstSeed: firstSeed, days: days) }
                    XCTAssertEqual(parts.flatMap { $0 }.sorted(), all.sorted(), "\(days) days in \(count) from \(firstSeed)")
                    for (shard, seeds) in zip(shards, parts) {
                        XCTAssertEqual(seeds, all.filter { shard.owns(seed: $0, firstSeed: firstSeed) }, "shard \(shard.name)")
                    }
                    let sizes = parts.map(\.count)
                    XCTAssertLessThanOrEqual(sizes.max()! - sizes.min()!, 1)
                }
            }
        }
        // A stride: a seed keeps its shard when the run explores more days.
        let shard = try ExploreShard(parsing: "2/4", source: "test")
        XCTAssertEqual(shard.seeds(firstSeed: 1, days: 10), [2, 6, 10])
        XCTAssertEqual(shard.seeds(firstSeed: 1, days: 20).prefix(3), [2, 6, 10])
    }

    func testABadShardIsRefusedSayingWhatAShardIs() {
        for text in ["0/4", "5/4", "a/4", "2/0", "2", "2/4/1", "-1/4", "", "1/"] {
            XCTAssertThrowsError(try ExploreShard(parsing: text, source: "--shard"), text) { error in
                let said = "\(error)"
                XCTAssertTrue(said.hasPrefix("--shard: "), said)
                XCTAssertTrue(said.contains("I/N") || said.contains("counted from 1") || said.contains("at least 1"), said)
            }
        }
        XCTAssertEqual(try ExploreShard(parsing: "4/4", source: "--shard").index, 4)
    }

    // MARK: The engines' variables

    func testTheShardIsTakenFromTheBatchEnginesVariables() throws {
        func shard(_ environment: [String: String]) throws -> String? {
            try ExploreShard.fromEnvironment(environment).map { "\($0.name) \($0.source)" }
        }
        XCTAssertNil(try shard([:]))
        XCTAssertNil(try shard(["PATH": "/bin"]))
        XCTAssertEqual(try shard(["SHIELDBUS_SHARD": "3/8"]), "3/8 SHIELDBUS_SHARD=3/8")
        // Kubernetes counts its completions from 0.
        XCTAssertEqual(try shard(["JOB_COMPLETION_INDEX": "0", "SHIELDBUS_SHARD_COUNT": "4"]),
                       "1/4 JOB_COMPLETION_INDEX=0 of SHIELDBUS_SHARD_COUNT=4 (Kubernetes Indexed Job)")
        XCTAssertEqual(try shard(["JOB_COMPLETION_INDEX": "3", "SHIELDBUS_SHARD_COUNT": "4"])?.prefix(3), "4/4")
        // Slurm's array may start anywhere and step.
        XCTAssertEqual(try shard(["SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "3", "SLURM_ARRAY_TASK_COUNT": "4"])?.prefix(3), "3/4")
        XCTAssertEqual(try shard(["SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4"])?.prefix(3), "4/4")
        XCTAssertTrue(try shard(["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "4"])!.contains("(Slurm job array)"))
        // SHIELDBUS_SHARD wins over an engine's index (a CI matrix inside a Slurm job, say).
        XCTAssertEqual(try shard(["SHIELDBUS_SHARD": "1/2", "SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "4"])?.prefix(3), "1/2")

        let refused: [([String: String], String)] = [
            (["JOB_COMPLETION_INDEX": "1"], "needs SHIELDBUS_SHARD_COUNT"),
            (["JOB_COMPLETION_INDEX": "4", "SHIELDBUS_SHARD_COUNT": "4"], "shard 5 of 4 does not exist"),
            (["JOB_COMPLETION_INDEX": "x", "SHIELDBUS_SHARD_COUNT": "4"], "JOB_COMPLETION_INDEX must be a whole number, not 'x'"),
            (["SLURM_ARRAY_TASK_ID": "2"], "without SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN"),
            (["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4"], "not on the array's steps of 2"),
            (["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"], "not on the array's steps"),
            (["SHIELDBUS_SHARD": "4"], "SHIELDBUS_SHARD=4: a shard is I/N"),
        ]
        for (environment, reason) in refused {
            XCTAssertThrowsError(try ExploreShard.fromEnvironment(environment), "\(environment)") { error in
                XCTAssertTrue("\(error)".contains(reason), "\(error)")
            }
        }
    }

    // MARK: The merge

    static let run = ExploreRun(version: "0.1.0", configPath: "Config/habit-lock.yml", configText: "name: habit-lock\n", product: "habit-lock",
                                profiles: ["faithful", "ios-realistic"], firstSeed: 5, days: 7, shrinkRuns: 60, failuresDirectory: "explore-failures")

    /// A played day of `seed` under `profile`: seeds 7 and 9 fail (7 under both profiles), each shrunk; seed 9's and seed
    /// 7's faithful failures shrink to the same scenario.
    static func day(_ seed: UInt64, _ profile: String) -> ExploredDay {
        var day = ExploredDay(seed: seed, profile: profile, timeZone: "Asia/Tokyo", start: "2026-03-0\(seed % 9)T08:00", steps: Int(20 + seed),
                              events: Int(300 + seed * 7), violations: [], account: [], runProblem: nil,
                              coverage: ["habit-lock: unlocks earned": Int(seed % 2), "device: clock set": Int(seed % 3 + 1)].filter { $0.value > 0 })
        if seed == 7 || (seed == 9 && profile == "faithful") {
            day.violations = ["TikTok was usable from 11:38:56 to 12:25:08 (46 min)"]
            day.account = ["usable-while-locked: " + day.violations[0], "last to write the ManagedSettings stores before it: monitor"]
            let scenario = "start: 2026-03-01T08:00\nprofile: \(profile)\nseed: 7\nsteps:\n  - after: 1m\n    open: TikTok\n"
            day.failure = ExploredFailure(file: "explore-failures/habit-lock-seed\(seed).yml", steps: 1, shrinkRuns: 12, account: day.account,
                                          scenario: "# \(day.account[0])\nname: habit-lock-seed\(seed)\n" + scenario)
        }
        return day
    }

    static var whole: ExploreResults {
        ExploreResults(run: run, shard: .whole, days: (0..<UInt64(run.days)).flatMap { offset in run.profiles.map { day(run.firstSeed + offset, $0) } })
    }

    /// Shard `index` of `count` of `whole`, through its file's bytes.
    static func shard(_ index: Int, of count: Int, run: ExploreRun = run, keeping: Int? = nil) throws -> ExploreMerge.Part {
        let shard = try ExploreShard(index: index, count: count, source: "test")
        var days = whole.days.filter { shard.owns(seed: $0.seed, firstSeed: run.firstSeed) }
        if let keeping { days = Array(days.prefix(keeping)) }
        let text = ExploreResults(run: run, shard: shard, days: days).json.jsonText
        return ("shard-\(index)-of-\(count).json", try ExploreResults(json: try JSONValue(parsing: text), name: "shard-\(index)-of-\(count).json"))
    }

    func testAResultsFileReadsBackAsWritten() throws {
        let whole = Self.whole
        let text = whole.json.jsonText
        XCTAssertEqual(try ExploreResults(json: try JSONValue(parsing: text), name: "whole.json"), whole)
        let json = try JSONValue(parsing: text)
        XCTAssertEqual(json["format"]?.stringValue, "shieldbus-explore-results")
        XCTAssertEqual(json["formatVersion"]?.intValue, 1)
        XCTAssertEqual(json["totals"]?["failures"]?.intValue, 3)
        XCTAssertEqual(json["days"]?.arrayValue?.count, 14)
        XCTAssertEqual(json["complete"]?.boolValue, true)
        XCTAssertTrue(json["days"]?.arrayValue?[4]["failure"]?["scenario"]?.stringValue?.contains("open: TikTok") == true, text)
    }

    func testShardsMergedInAnyOrderGiveTheOneMachineReportByteForByte() throws {
        let whole = Self.whole
        for count in 1...5 {
            let parts = try (1...count).map { try Self.shard($0, of: count) }
            let merged = try ExploreMerge.merge(parts.reversed())
            XCTAssertEqual(merged, whole, "\(count) shards")
            for json in [false, true] {
                XCTAssertEqual(ExploreReportWriter.report(of: merged, json: json), ExploreReportWriter.report(of: whole, json: json), "\(count) shards")
            }
        }
        let text = ExploreReportWriter.report(of: whole, json: false)
        XCTAssertTrue(text.hasPrefix("explore Config/habit-lock.yml (habit-lock): 7 day(s) × faithful, ios-realistic from seed 5\n"), text)
        XCTAssertTrue(text.contains("explored 14 day(s), 4984 events: 3 failure(s), 2 distinct shrunk scenario(s)\n"), text)
        XCTAssertTrue(text.contains("  shrunk to the same scenario as seed 7 (faithful): explore-failures/habit-lock-seed7.yml\n"), text)
        XCTAssertTrue(text.contains("  habit-lock: unlocks earned 8 (×8)\n  device: clock set 14 (×"), text)
        let lines = try ExploreReportWriter.report(of: whole, json: true).split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        XCTAssertEqual(lines.filter { $0["seed"] != nil }.map { $0["seed"]!.intValue! }, [5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11])
        XCTAssertEqual(lines.compactMap { $0["failure"]?["sameAs"]?["seed"]?.intValue }, [7])
        XCTAssertEqual(lines.last?["distinctFailures"]?.intValue, 2)
        XCTAssertEqual(lines.last?["failures"]?.intValue, 3)
    }

    func testTheSameShardGivenTwiceIsReadOnceAndSaidSo() throws {
        var notes: [String] = []
        let parts = try [Self.shard(1, of: 2), Self.shard(2, of: 2), Self.shard(2, of: 2)]
        XCTAssertEqual(try ExploreMerge.merge(parts) { notes.append($0) }, Self.whole)
        XCTAssertEqual(notes, ["shard-2-of-2.json: shard 2/2 again, the same days as shard-2-of-2.json: read once"])
    }

    func testShardsOfAnotherRunAreRefusedSayingWhatDiffers() throws {
        let changes: [(String, (inout ExploreRun) -> Void)] = [
            ("shieldbus version 0.2.0 ≠ 0.1.0", { $0.version = "0.2.0" }),
            ("configuration Config/x.yml ≠ Config/habit-lock.yml", { $0.configPath = "Config/x.yml" }),
            ("configuration Config/habit-lock.yml: its text differs", { $0.configText = "name: other\n" }),
            ("product speed-bump ≠ habit-lock", { $0.product = "speed-bump" }),
            ("profiles faithful ≠ faithful, ios-realistic", { $0.profiles = ["faithful"] }),
            ("first seed 6 ≠ 5", { $0.firstSeed = 6 }),
            ("days 8 ≠ 7", { $0.days = 8 }),
            ("shrink runs 0 ≠ 60", { $0.shrinkRuns = 0 }),
            ("failures dir out ≠ explore-failures", { $0.failuresDirectory = "out" }),
        ]
        for (said, change) in changes {
            var other = Self.run
            change(&other)
            let stranger = ExploreResults(run: other, shard: try ExploreShard(index: 2, count: 2, source: "test"), days: [])
            XCTAssertThrowsError(try ExploreMerge.merge([try Self.shard(1, of: 2), ("other.json", stranger)]), said) { error in
                XCTAssertEqual("\(error)", "other.json is not a shard of the same run as shard-1-of-2.json: \(said)")
            }
        }
    }

    func testMissingOverlappingAndCutShortShardsAreRefused() throws {
        func refusal(_ parts: [ExploreMerge.Part]) -> String {
            do {
                _ = try ExploreMerge.merge(parts)
                return "merged"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(refusal([try Self.shard(1, of: 4), try Self.shard(4, of: 4)]), "shard(s) 2/4, 3/4 missing: have 1/4, 4/4")
        XCTAssertEqual(refusal([try Self.shard(1, of: 2), try Self.shard(2, of: 3)]),
                       "shard-2-of-3.json is shard 2/3 and shard-1-of-2.json shard 1/2: shards of different splits")
        XCTAssertEqual(refusal([]), "no results files to merge")
        // The same shard twice, with other days: two machines played it and disagree (or one was cut short).
        XCTAssertEqual(refusal([try Self.shard(1, of: 2), try Self.shard(2, of: 2), ("again.json", try Self.shard(2, of: 2, keeping: 3).results)]),
                       "shard 2/2 given twice with different days: shard-2-of-2.json and again.json")
        XCTAssertEqual(refusal([try Self.shard(1, of: 2), try Self.shard(2, of: 2, keeping: 3)]),
                       "shard-2-of-2.json (shard 2/2) played 3 of its 6 days (a time budget ran out): play it again without one to merge")
    }

    func testAResultsFileThatIsNotAShardsOwnIsRefusedWhenRead() throws {
        func refusal(_ edit: (inout [String: JSONValue]) -> Void) throws -> String {
            guard case .object(var json) = try Self.shard(1, of: 2).results.json else { return "not an object" }
            edit(&json)
            do {
                _ = try ExploreResults(json: .object(json), name: "edited.json")
                return "read"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(try refusal { _ in }, "read")
        XCTAssertEqual(try refusal { $0["format"] = nil }, "edited.json: not an explore results file (no \"format\": \"shieldbus-explore-results\")")
        XCTAssertEqual(try refusal { $0["formatVersion"] = 2 }, "edited.json: results format version 2; this shieldbus reads version 1")
        XCTAssertEqual(try refusal { $0["shard"] = ["index": 3, "count": 2, "source": "x"] },
                       "edited.json: x: shard 3 of 2 does not exist (shards are counted from 1 to 2)")
        XCTAssertEqual(try refusal { json in
            // Shard 1/2 of seeds 5… holds 5, 7, 9, 11: a day of seed 6 is shard 2/2's.
            guard case .array(var days) = json["days"]!, case .object(var day) = days[2] else { return }
            day["seed"] = 6
            days[2] = .object(day)
            json["days"] = .array(days)
        }, "edited.json: day 3 is seed 6 (faithful), but shard 1/2's day 3 is seed 7 (faithful)")
        XCTAssertEqual(try refusal { json in
            guard case .array(var days) = json["days"]!, case .object(var day) = days[0] else { return }
            day["events"] = "many"
            days[0] = .object(day)
            json["days"] = .array(days)
        }, "edited.json: day 1: \"events\" is not a whole number")
        XCTAssertThrowsError(try ExploreResults(path: "/nonexistent/shard.json")) { XCTAssertEqual("\($0)", "/nonexistent/shard.json: cannot read it") }
    }
}
