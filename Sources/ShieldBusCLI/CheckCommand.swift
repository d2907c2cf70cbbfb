import ArgumentParser
import BusProtocol
import Configuration
import Foundation
import LockInvariant

extension ShieldBus {
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a journal against the lock invariant of the product its configuration runs.",
            discussion: """
            The invariant: once an unlock or a pass ends, no shielded app, category member or web domain is \
            usable more than one minute after its end; and nothing is shielded that should not be. The \
            product's rules (habits, unlock length, focus hours, passes, thresholds) come from the configuration; \
            what happened comes from the journal. Exits 3 when the invariant was broken.
            """
        )

        @Option(name: .long, help: ArgumentHelp("The configuration the run used.", valueName: "file"))
        var config: String?

        @Argument(help: "The journal (JSON Lines) of the run.")
        var journal: String

        func run() throws {
            let configuration = try ShieldBusConfiguration.load(path: try DefaultFiles.configurationPath(config))
            let catalog = try AppCatalog.load(path: try configuration.catalog.map(configuration.resolve) ?? DefaultFiles.catalogPath(near: configuration.file))
            guard let data = FileManager.default.contents(atPath: journal) else { throw CommandFailure("cannot read \(journal)") }
            let envelopes = try String(decoding: data, as: UTF8.self).split(separator: "\n").map { try WireCodec.decodeEnvelope(Array($0.utf8)) }
            guard let policy = LockPolicy(configuration: configuration, catalog: catalog, timeZone: TimeZone(identifier: configuration.timeZone) ?? .current) else {
                throw CommandFailure("\(configuration.file) runs no reference product (no plugin has a `product` option): nothing to check")
            }
            let violations = LockInvariantChecker(policy: policy).violations(in: envelopes)
            print(LockReport.text(violations, product: policy.product.rawValue))
            if !violations.isEmpty { throw ExitCode(3) }
        }
    }
}

/// The invariant's verdict in words.
enum LockReport {
    static func text(_ violations: [LockViolation], product: String) -> String {
        if violations.isEmpty { return "  lock invariant    held (\(product))" }
        return (["  lock invariant    BROKEN (\(product)): \(violations.count) violation(s)"] + violations.map { "    - \($0)" }).joined(separator: "\n")
    }
}
