import Foundation

/// One part of an explore's seeds, played on one machine: shard `index` of `count`, counted from 1.
///
/// Seed `s` of a run starting at seed `S` belongs to shard `(s - S) mod count + 1` (a stride, not a range): a seed
/// keeps its shard when a later run explores more days, and every shard gets a spread of the seeds. Both profiles of a
/// seed are in the same shard, so a failure's file name (`<product>-seed<S>[-<profile>]`) is what one machine gives.
public struct ExploreShard: Equatable, Sendable {
    public let index: Int
    public let count: Int
    /// Where the shard came from, in words: `--shard`, or the environment variable a batch engine set.
    public let source: String

    /// The whole run, as one machine plays it.
    public static let whole = ExploreShard(validIndex: 1, count: 1, source: "the whole run")

    private init(validIndex index: Int, count: Int, source: String) {
        self.index = index
        self.count = count
        self.source = source
    }

    public init(index: Int, count: Int, source: String) throws {
        guard count >= 1 else { throw ExploreShardError("\(source): the shard count must be at least 1, not \(count)") }
        guard (1...count).contains(index) else {
            throw ExploreShardError("\(source): shard \(index) of \(count) does not exist (shards are counted from 1 to \(count))")
        }
        self.init(validIndex: index, count: count, source: source)
    }

    /// `I/N`, as `--shard` and `SHIELDBUS_SHARD` take it.
    public init(parsing text: String, source: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw ExploreShardError("\(source): a shard is I/N (shard I of N, counted from 1, e.g. 2/4), not '\(text)'")
        }
        try self.init(index: index, count: count, source: source)
    }

    /// `I/N`.
    public var name: String { "\(index)/\(count)" }

    public var isWhole: Bool { count == 1 }

    /// Whether `seed` is this shard's in a run whose first seed is `firstSeed`.
    public func owns(seed: UInt64, firstSeed: UInt64) -> Bool {
        (seed &- firstSeed) % UInt64(count) == UInt64(index - 1)
    }

    /// This shard's seeds of the `days` seeds from `firstSeed`, in order.
    public func seeds(firstSeed: UInt64, days: Int) -> [UInt64] {
        stride(from: index - 1, to: max(0, days), by: count).map { firstSeed &+ UInt64($0) }
    }

    /// The shard the batch engine running this process names, or nil when none does. In order: `SHIELDBUS_SHARD=I/N`
    /// (a CI matrix, or anything else), a Kubernetes Indexed Job (`JOB_COMPLETION_INDEX`, counted from 0, with
    /// `SHIELDBUS_SHARD_COUNT`: Kubernetes does not say how many completions there are), a Slurm job array
    /// (`SLURM_ARRAY_TASK_ID` from `SLURM_ARRAY_TASK_MIN` by `SLURM_ARRAY_TASK_STEP`, `SLURM_ARRAY_TASK_COUNT` tasks).
    public static func fromEnvironment(_ environment: [String: String]) throws -> ExploreShard? {
        if let text = environment["SHIELDBUS_SHARD"] {
            return try ExploreShard(parsing: text, source: "SHIELDBUS_SHARD=\(text)")
        }
        if let text = environment["JOB_COMPLETION_INDEX"] {
            let source = "JOB_COMPLETION_INDEX=\(text)"
            guard let countText = environment["SHIELDBUS_SHARD_COUNT"] else {
                throw ExploreShardError("\(source) (a Kubernetes Indexed Job) needs SHIELDBUS_SHARD_COUNT set to the Job's completions")
            }
            let index = try number(text, "JOB_COMPLETION_INDEX"), count = try number(countText, "SHIELDBUS_SHARD_COUNT")
            return try ExploreShard(index: index + 1, count: count, source: "\(source) of SHIELDBUS_SHARD_COUNT=\(countText) (Kubernetes Indexed Job)")
        }
        if let text = environment["SLURM_ARRAY_TASK_ID"] {
            let id = try number(text, "SLURM_ARRAY_TASK_ID")
            guard let countText = environment["SLURM_ARRAY_TASK_COUNT"], let minimumText = environment["SLURM_ARRAY_TASK_MIN"] else {
                throw ExploreShardError("SLURM_ARRAY_TASK_ID=\(text) without SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN: not a Slurm job array's task")
            }
            let count = try number(countText, "SLURM_ARRAY_TASK_COUNT"), minimum = try number(minimumText, "SLURM_ARRAY_TASK_MIN")
            let step = try environment["SLURM_ARRAY_TASK_STEP"].map { try number($0, "SLURM_ARRAY_TASK_STEP") } ?? 1
            let source = "SLURM_ARRAY_TASK_ID=\(text) of SLURM_ARRAY_TASK_COUNT=\(countText) from SLURM_ARRAY_TASK_MIN=\(minimumText) (Slurm job array)"
            // An array such as --array=1,5,9 has no single step: its tasks cannot be numbered 1…N.
            guard step >= 1, id >= minimum, (id - minimum) % step == 0 else {
                throw ExploreShardError("\(source): the task is not on the array's steps of \(step); give the array as a range (--array=0-\(count - 1))")
            }
            return try ExploreShard(index: (id - minimum) / step + 1, count: count, source: source)
        }
        return nil
    }

    private static func number(_ text: String, _ name: String) throws -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
            throw ExploreShardError("\(name) must be a whole number, not '\(text)'")
        }
        return value
    }
}

public struct ExploreShardError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
