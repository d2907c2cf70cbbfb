import BusProtocol
import Configuration
import DeviceAPI
import Foundation
import LockInvariant

/// A journal judged by the promises of its configuration's products, and where in it each violation begins: the
/// seq of the last event before it (what `shieldbus check` names for the Studio's `--at`, and where the Studio opens).
struct JournalVerdicts {
    let verdicts: [ProductVerdict]
    /// For each violation of `verdicts`, in their order: the seq of the last event at or before its start.
    let violationSeqs: [UInt64?]

    var violations: [LockViolation] { verdicts.flatMap(\.violations) }

    /// Reads the journal file once, in chunks (a year's journal is hundreds of MB); a line that is not an envelope
    /// is an error naming the file and the line.
    init(journal path: String, checker: LockInvariantChecker) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CommandFailure("cannot read \(path)") }
        defer { try? handle.close() }
        var reading = checker.reading()
        // Each event's instant and seq, to name the event a violation begins after.
        var instants: [(time: BusTime, seq: UInt64)] = []
        var line = 0
        _ = try JournalLines.read(handle, from: 0, unterminatedToo: true) { bytes, _ in
            line += 1
            guard !JournalLines.isBlank(bytes) else { return true }
            let envelope: Envelope
            do { envelope = try WireCodec.decodeEnvelope(Array(bytes)) } catch {
                throw CommandFailure("\(path):\(line): not a journal line: \(error)")
            }
            reading.read(envelope)
            instants.append((envelope.time, envelope.seq))
            return true
        }
        verdicts = reading.verdicts()
        violationSeqs = verdicts.flatMap(\.violations).map { violation in
            let from = busTime(violation.from)
            return instants.last { $0.time <= from }?.seq
        }
    }

    /// The checker's account for the Studio: each product's verdict, and each violation with what it says, its kind,
    /// its product and target, who last decided, and the event it begins after (`at`).
    var studioAccount: JSONValue {
        var index = 0
        return .object([
            "held": .bool(verdicts.allSatisfy(\.isHeld)),
            "products": .array(verdicts.map { verdict in
                var fields: [String: JSONValue] = [
                    "product": .string(verdict.product), "held": .bool(verdict.isHeld),
                    "violations": .array(verdict.violations.map { violation in
                        defer { index += 1 }
                        var fields: [String: JSONValue] = [
                            "kind": .string(violation.kind.rawValue), "product": .string(violation.product), "target": .string(violation.target),
                            "description": .string(violation.description), "decidedBy": .string(violation.decidedBy ?? "no plugin"),
                        ]
                        if let seq = violationSeqs[index] { fields["at"] = .int(Int64(seq)) }
                        return .object(fields)
                    }),
                ]
                if let failure = verdict.modelFailure { fields["modelFailure"] = .string(failure) }
                return .object(fields)
            }),
        ])
    }
}
