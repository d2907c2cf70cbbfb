import Foundation

/// Joins shards' results into the results of the whole run, as one machine would have played it — or says why not.
public enum ExploreMerge {
    /// One shard's results and the file they came from (named in every refusal).
    public typealias Part = (name: String, results: ExploreResults)

    /// The whole run: every shard of one split of one run, each complete. A shard given twice with the same days (a
    /// retried job writes what the first try wrote: the same seeds give the same days) is read once; `notes` hears it.
    public static func merge(_ parts: [Part], notes: (String) -> Void = { _ in }) throws -> ExploreResults {
        guard let first = parts.first else { throw ExploreResultsError("no results files to merge") }
        for part in parts.dropFirst() {
            let differences = part.results.run.differences(from: first.results.run)
            guard differences.isEmpty else {
                throw ExploreResultsError("\(part.name) is not a shard of the same run as \(first.name): \(differences.joined(separator: "; "))")
            }
            guard part.results.shard.count == first.results.shard.count else {
                throw ExploreResultsError("\(part.name) is shard \(part.results.shard.name) and \(first.name) shard \(first.results.shard.name): shards of different splits")
            }
        }
        var byIndex: [Int: Part] = [:]
        for part in parts {
            if let earlier = byIndex[part.results.shard.index] {
                guard earlier.results.days == part.results.days else {
                    throw ExploreResultsError("shard \(part.results.shard.name) given twice with different days: \(earlier.name) and \(part.name)")
                }
                notes("\(part.name): shard \(part.results.shard.name) again, the same days as \(earlier.name): read once")
                continue
            }
            byIndex[part.results.shard.index] = part
        }
        let count = first.results.shard.count
        let missing = (1...count).filter { byIndex[$0] == nil }
        guard missing.isEmpty else {
            throw ExploreResultsError("shard(s) \(missing.map { "\($0)/\(count)" }.joined(separator: ", ")) missing: have \(byIndex.keys.sorted().map { "\($0)/\(count)" }.joined(separator: ", "))")
        }
        let incomplete = byIndex.keys.sorted().compactMap { index -> String? in
            let results = byIndex[index]!.results
            return results.isComplete ? nil : "\(byIndex[index]!.name) (shard \(results.shard.name)) played \(results.days.count) of its \(results.plannedDays.count) days"
        }
        guard incomplete.isEmpty else {
            throw ExploreResultsError("\(incomplete.joined(separator: "; ")) (a time budget ran out): play it again without one to merge")
        }
        // Seed S is shard (S - first) mod N + 1's: the whole run's days are the shards' taken in turn, seed by seed.
        let profiles = first.results.run.profiles.count
        var days: [ExploredDay] = []
        days.reserveCapacity(first.results.run.days * profiles)
        for offset in 0..<max(0, first.results.run.days) {
            let shard = byIndex[offset % count + 1]!.results
            let position = offset / count * profiles
            days += shard.days[position..<position + profiles]
        }
        return ExploreResults(run: first.results.run, shard: .whole, days: days)
    }
}
