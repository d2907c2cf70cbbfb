import ArgumentParser
import BusProtocol
import Configuration
import DeviceAPI
import Foundation
import LockInvariant
import RunPlanning

extension ShieldBus {
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check a journal against the promise of every product its configuration runs.",
            discussion: """
            Each product's `promise:` (docs/promises.md) says when its targets are locked. The invariant, for each \
            product: nothing it selected is usable longer than the promise's grace (a minute by default) after it \
            must be locked, and nothing is under its shield longer than that after it must be usable. What happened \
            comes from the OS's events in the journal (the person's actions, what was on screen), never from the \
            plugins. Windows are local wall time in the zone in force, judged in true bus time. Prints each \
            product's verdict; exits 3 when any product's promise was broken (or its promise model failed), 2 when \
            no product declares a promise.
            """
        )

        @Option(name: .long, help: ArgumentHelp("The configuration the run used.", valueName: "file"))
        var config: String?

        @Option(name: .long, help: ArgumentHelp("The device's time zone when the journal begins, if the run's scenario named another than the configuration.", valueName: "iana-name"))
        var timeZone: String?

        @Flag(name: .long, help: "Print the verdicts as one JSON object.")
        var json = false

        @Argument(help: "The journal (JSON Lines) of the run.")
        var journal: String

        func run() throws {
            let configuration = try ShieldBusConfiguration.load(path: try DefaultFiles.configurationPath(config))
            let catalog = try DefaultFiles.catalog(for: configuration)
            let zone = try timeZone.map { name in
                guard let zone = TimeZone(identifier: name) else { throw CommandFailure("unknown time zone '\(name)' (use an IANA name like Europe/Berlin)") }
                return zone
            }
            let checker = try LockInvariantChecker(configuration: configuration, catalog: catalog, timeZone: zone, models: DefaultFiles.promiseModels)
            guard !checker.products.isEmpty else {
                printError("error: \(LockReport.noPromise(configuration)); nothing to check")
                throw ExitCode(2)
            }
            let judged = try JournalVerdicts(journal: journal, checker: checker)
            let verdicts = judged.verdicts
            print(json ? LockReport.json(verdicts).jsonText : LockReport.text(verdicts))
            if !json {
                for seq in judged.violationSeqs.compactMap({ $0 }) {
                    print("  see it in the Studio: shieldbus studio --journal \(journal) --config \(try DefaultFiles.configurationPath(config)) --at \(seq)")
                }
            }
            if verdicts.contains(where: { !$0.isHeld }) { throw ExitCode(3) }
        }
    }
}

/// The invariant's verdicts, in words or as JSON.
enum LockReport {
    /// Why a configuration is not checked, and what to add.
    static func noPromise(_ configuration: ShieldBusConfiguration) -> String {
        let names = ProductRules.undeclared(in: configuration)
        return "\(names.joined(separator: ", ")) declare\(names.count == 1 ? "s" : "") no promise in \(configuration.file): add a `promise:` "
            + "(\(configuration.products.isEmpty ? "at the top level" : "to the product")) saying when its targets are locked, e.g. "
            + "`promise: {locked: always, unlocks: [{habits: 3, minutes: 30}]}` (docs/promises.md)"
    }

    static func text(_ verdicts: [ProductVerdict]) -> String {
        verdicts.map { verdict in
            if let failure = verdict.modelFailure { return "  lock invariant    NOT JUDGED (\(verdict.product)): \(failure)" }
            if verdict.isHeld { return "  lock invariant    held (\(verdict.product))" }
            return (["  lock invariant    BROKEN (\(verdict.product)): \(verdict.violations.count) violation(s)"]
                + verdict.violations.map { "    - \($0)" }).joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// `{"held": Bool, "products": [{"product", "held", "violations": [...], "modelFailure"?}]}`; times are bus times (ms).
    static func json(_ verdicts: [ProductVerdict]) -> JSONValue {
        .object([
            "held": .bool(verdicts.allSatisfy(\.isHeld)),
            "products": .array(verdicts.map { verdict in
                var fields: [String: JSONValue] = ["product": .string(verdict.product), "held": .bool(verdict.isHeld),
                                                   "violations": .array(verdict.violations.map(json))]
                if let failure = verdict.modelFailure { fields["modelFailure"] = .string(failure) }
                return .object(fields)
            }),
        ])
    }

    static func json(_ violation: LockViolation) -> JSONValue {
        var fields: [String: JSONValue] = [
            "kind": .string(violation.kind.rawValue), "product": .string(violation.product), "target": .string(violation.target),
            "from": .int(busTime(violation.from)), "to": .int(busTime(violation.to)),
            "pastEndMs": .int(Int64((violation.pastEnd * 1000).rounded())), "description": .string(violation.description),
        ]
        if let since = violation.since { fields["since"] = .int(busTime(since)) }
        if let decidedBy = violation.decidedBy { fields["decidedBy"] = .string(decidedBy) }
        return .object(fields)
    }
}
