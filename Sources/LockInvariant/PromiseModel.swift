import BusProtocol
import Configuration
import Foundation
import DeviceAPI

/// The escape hatch: for a promise the rules cannot say, a model written by the product's author says when each
/// selected target must be locked. The checker hands it the journal's facts as it reads them — the OS's events
/// (the person's acts among them), never what plugins say — and judges the screen against its answer exactly as
/// against the rules'.
public protocol PromiseModel {
    /// Each target's locked intervals (by the catalog name of an app, or a web domain); a target left out is never
    /// locked. `timeZone`: the device's zone when the journal begins (`device.time-zone-changed` events change it).
    func lockedPeriods(journal: [Envelope], product: String, timeZone: TimeZone) throws -> [String: [DateInterval]]
}

/// The models a configuration may name in `promise.model`: Swift types registered by name (a program that embeds
/// the checker), else an executable — a path relative to the configuration, or a program next to `shieldbus` or on
/// PATH — run as an `ExecutablePromiseModel`.
public struct PromiseModels {
    public var registered: [String: PromiseModel]
    /// Where programs named without a slash are looked for first (the folder of `shieldbus`).
    public var programFolder: String?

    public init(registered: [String: PromiseModel] = [:], programFolder: String? = nil) {
        self.registered = registered
        self.programFolder = programFolder
    }

    public static var none: PromiseModels { PromiseModels() }

    func model(named name: String, configuration: ShieldBusConfiguration) -> PromiseModel? {
        if let model = registered[name] { return model }
        let candidates: [String]
        if name.contains("/") {
            candidates = [configuration.resolve(name)]
        } else {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            candidates = (programFolder.map { [$0 + "/" + name] } ?? []) + path.split(separator: ":").map { "\($0)/\(name)" }
        }
        return candidates.first(where: FileManager.default.isExecutableFile(atPath:)).map(ExecutablePromiseModel.init(path:))
    }

    var describe: String {
        let names = registered.keys.sorted()
        return (names.isEmpty ? "" : "registered: \(names.joined(separator: ", ")); ") + "nor an executable by that name (a path relative to the configuration, or a program next to shieldbus or on PATH)"
    }
}

/// A model in a program of its own, in any language: it reads the journal's OS events as JSON lines on its standard
/// input (the journal's own format; `SHIELDBUS_PRODUCT` names the product, `SHIELDBUS_TIME_ZONE` the device's zone when
/// the journal begins) and writes one JSON object on its
/// standard output: `{"locked": {"Instagram": [[fromMs, toMs], …], …}}`, bus times in milliseconds since 1970.
/// A model that fails, or answers anything else, is an error naming it: never a verdict.
public struct ExecutablePromiseModel: PromiseModel {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public func lockedPeriods(journal: [Envelope], product: String, timeZone: TimeZone) throws -> [String: [DateInterval]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.environment = ProcessInfo.processInfo.environment.merging(["SHIELDBUS_PRODUCT": product, "SHIELDBUS_TIME_ZONE": timeZone.identifier]) { $1 }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        // Its end is taken from the termination handler: `waitUntilExit` looks every 50 ms, a pause after every day judged.
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        // Written from another thread: a model that answers while reading would otherwise fill its pipe and ours.
        let writer = Thread {
            var bytes: [UInt8] = []
            for envelope in journal { bytes += WireCodec.encodeEnvelope(envelope); bytes.append(10) }
            try? input.fileHandleForWriting.write(contentsOf: bytes)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        // Its complaints are read beside its answer: a model that says much on standard error must not block on it.
        let complaints = ErrorCollector()
        let reader = Thread { complaints.data = errors.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let answer = output.fileHandleForReading.readDataToEndOfFile()
        exited.wait()
        let complaint = complaints.wait()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "the promise model \(path) exited with status \(process.terminationStatus): \(complaint.split(separator: "\n").suffix(3).joined(separator: " / "))")
        }
        guard let value = try? JSONValue(parsing: Array(answer)), let locked = value["locked"]?.objectValue else {
            throw Failure(description: "the promise model \(path) did not answer {\"locked\": {target: [[fromMs, toMs], …]}}: \(String(decoding: answer.prefix(200), as: UTF8.self))")
        }
        var periods: [String: [DateInterval]] = [:]
        for (target, list) in locked {
            guard let pairs = list.arrayValue else {
                throw Failure(description: "the promise model \(path) gave \(target) \(list.jsonText) instead of a list of [fromMs, toMs]")
            }
            periods[target] = try pairs.map { pair in
                guard let bounds = pair.arrayValue, bounds.count == 2, let from = bounds[0].intValue, let to = bounds[1].intValue, to >= from else {
                    throw Failure(description: "the promise model \(path) gave \(target) an interval that is not [fromMs, toMs]")
                }
                return DateInterval(start: date(busTime: from), end: date(busTime: to))
            }
        }
        return periods
    }
}

/// Standard error of a model, read on its own thread until the model closes it.
private final class ErrorCollector: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    var data = Data() { didSet { done.signal() } }

    func wait() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}
