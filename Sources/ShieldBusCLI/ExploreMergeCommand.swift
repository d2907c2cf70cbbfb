import ArgumentParser
import Explore
import Foundation

extension ShieldBus.ExploreCommand {
    /// `shieldbus explore merge FILES…`: the shards' results joined into the whole run's report.
    struct Merge: ParsableCommand {
        // Named, as every command is: a name derived from the type's is a `String(describing:)`, which scans the
        // program's conformance records at every start of `shieldbus` (ArgumentParser names each command it knows).
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Join the results files of an explore's shards into the report one machine gives for the same seeds.",
            discussion: """
            Each file is what `shieldbus explore --shard I/N --results FILE` wrote. The merged report — the days, the \
            failures (one listing per shrunk scenario), the totals and the coverage — is the very text (or with \
            --json the very lines) one machine prints for the same configuration and seeds, and each failure's shrunk \
            scenario is written to its file again, here, so its replay line works. Refused (exit 2, saying which file \
            and why): shards of different runs (configuration, product, profiles, first seed, days, shrink runs, \
            failures dir, shieldbus version), of different splits, a shard given twice with different days, a missing \
            shard, or one a time budget cut short. The same shard given twice with the same days is read once. \
            Exits 3 when a day failed, like explore.
            """
        )

        /// explore's own `--json` and `--results`: ArgumentParser gives a flag both commands declare to the parent's.
        @ParentCommand var explore: ShieldBus.ExploreCommand

        @Argument(help: ArgumentHelp("The shards' results files.", valueName: "file"))
        var files: [String]

        @Flag(name: .long, help: "The report as `shieldbus explore --json` prints it.")
        var json = false

        @Option(name: .long, help: ArgumentHelp("Also write the merged results here (a results file of the whole run).", valueName: "file"))
        var results: String?

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("name the shards' results files") }
        }

        func run() throws {
            let json = json || explore.json, results = results ?? explore.results
            let merged: ExploreResults
            do {
                merged = try ExploreMerge.merge(files.map { ($0, try ExploreResults(path: $0)) }, notes: { printError("explore merge: \($0)") })
            } catch let error as ExploreResultsError {
                printError("error: \(error)")
                throw ExitCode(2)
            }
            for failure in merged.days.compactMap(\.failure) { Explorer.writeFailure(failure.scenario, to: failure.file) }
            if let results {
                do {
                    try merged.write(to: results)
                } catch {
                    printError("error: cannot write the merged results to \(results): \(error)")
                    throw ExitCode(1)
                }
            }
            print(ExploreReportWriter.report(of: merged, json: json), terminator: "")
            printError("explore merge: \(files.count) file(s), \(merged.days.count) day(s)")
            if merged.days.contains(where: \.isFailure) { throw ExitCode(3) }
        }
    }
}
