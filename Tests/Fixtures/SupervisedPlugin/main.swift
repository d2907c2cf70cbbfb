// fixture-supervised: a plugin for the supervision tests — answers pings, and crashes, hangs or is refused on demand.
//
// Usage: fixture-supervised [--crash-at-start | --raw-hello JSON | --listener | --observer]
// Subscribes to `app.sup.`: answers `app.sup.ping` with `app.sup.pong` {"n", "pid"}; `app.sup.crash` makes it exit
// with status 3 (`app.sup.crash-once` {"n"}: the first time it is handed that n only) and `app.sup.hang` makes it stop
// answering and heartbeating; `activity.habit.completed` is
// answered with `app.sup.habit` {"sender"}. `app.sup.publish-when-stopped` waits until the broker is stopped (the
// test sends it SIGSTOP) and then publishes `app.sup.frozen` {"n"}, which the broker cannot have read; `app.sup.echo-then-hang` publishes `app.sup.echo`
// {"n"} and, the first time only (a marker in the state folder), hangs before the SDK records it as handled.
// `app.sup.ask` {"n"} publishes `app.sup.asking` {"n"}, calls `x.<name>.question.request` and publishes `app.sup.answered`
// {"n", "answer"} with the reply's body (`--call-timeout-ms N`: the call's timeout); `app.sup.ask-from-task` does the same
// from a `Task`, the handler waiting for it. `app.sup.calls` {"n", "cutAt"}
// makes three OS calls — FamilyControls authorization, a ManagedSettings write (store `sup`: every app category
// shielded), DeviceActivity's activities — each after publishing `app.sup.step` {"n", "step"}, then publishes
// `app.sup.calls-done` {"n"}; the first time only, before call number `cutAt`, it waits until the broker is stopped
// (the test sends it SIGSTOP) and leaves the marker `<state dir>/<name>-cut` so the test can kill it there. A failed
// call of either is published as `app.sup.call-failed` {"n", "error"}. `app.sup.work` {"ms", "bursts", "gapMs"} uses that
// much CPU — in `bursts` bursts with `gapMs` asleep between them, when given — before it publishes `app.sup.worked` and
// acknowledges (a plugin slow at its work, not stopped). `app.sup.crash-then-start-slowly` {"ms", "hung"} exits with status 3
// and has the next process use `ms` of CPU (`hung`: sleep `ms`, using none) before it says hello; so does
// `--slow-first-start spin|sleep MS` the plugin's first process (a marker in the state folder).
// --listener subscribes to `app.sup.echo` only and appends "<seq> <n>" to `<state dir>/<name>-heard` for each echo it
// handles (what it was given, seen from outside the bus). --observer only observes `app.sup.tell` (no turn; what it
// publishes meanwhile is held until the bus settles) and answers it with `app.sup.told` {"n"}. --crash-at-start exits with status 3
// at once (--crash-at-start-while FILE: while FILE exists); --raw-hello says hello with the given JSON object (plus its name, pid and credential), as a plugin in another
// language might, and exits with status 1 when the broker refuses it.

import BusClient
import BusProtocol
import DeviceActivity
import FamilyControls
import FixtureWork
import Foundation
import ManagedSettings
import ShieldBusSDK
import ZeroMQ

let name = ProcessInfo.processInfo.environment["SHIELDBUS_PLUGIN_NAME"] ?? "fixture-supervised"

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("\(name): \(message)\n".utf8))
    exit(status)
}

let isListener = CommandLine.arguments.contains("--listener")
let isObserver = CommandLine.arguments.contains("--observer")

final class SupervisedFixture: BusPlugin {
    override var subscriptions: [String] { isListener ? ["app.sup.echo"] : isObserver ? ["app.sup.tell"] : ["app.sup.", "activity.habit."] }
    override var observedTopics: [String] { isObserver ? ["app.sup.tell"] : [] }

    override func didStart() {
        if let timeout = option("--call-timeout-ms").flatMap(Int.init) { PluginRuntime.current?.callTimeoutMilliseconds = timeout }
    }

    override func handle(_ envelope: Envelope) {
        if isListener {
            // Its prefix matches `app.sup.echo-then-hang` too.
            if envelope.topic == "app.sup.echo" { hear(envelope) }
            return
        }
        if isObserver {
            try? PluginRuntime.current?.publish("app.sup.told", json: ["n": envelope.bodyValue["n"] ?? .null])
            return
        }
        switch envelope.topic {
        case "app.sup.ping":
            let n = envelope.bodyValue["n"] ?? .null
            try? PluginRuntime.current?.publish("app.sup.pong", json: ["n": n, "pid": .int(Int64(getpid()))])
        case "app.sup.crash":
            fail("crashing, as asked", status: 3)
        case "app.sup.crash-once":
            // The first process handed event `n` crashes with it in hand; the next, handed it again, acknowledges it.
            let marker = Fixture.home + "/\(name)-crashed-\(envelope.bodyValue["n"]?.intValue ?? 0)"
            guard FileManager.default.fileExists(atPath: marker) else {
                FileManager.default.createFile(atPath: marker, contents: Data())
                fail("crashing once, as asked", status: 3)
            }
        case "app.sup.crash-then-start-slowly":
            // Its next process takes so long to say hello: `ms` of CPU (`hung`: asleep, using none). Once: the next
            // process is handed the event again (this one ended with it in hand) and only acknowledges it.
            guard !FileManager.default.fileExists(atPath: Fixture.slowStart + "-done") else { break }
            let ms = envelope.bodyValue["ms"]?.intValue ?? 0, hung = envelope.bodyValue["hung"]?.boolValue ?? false
            FileManager.default.createFile(atPath: Fixture.slowStart, contents: Data("\(hung ? "sleep" : "spin") \(ms)".utf8))
            fail("crashing, as asked; the next start is slow", status: 3)
        case "activity.habit.completed":  // the SDK hands it over only when the system sent it
            try? PluginRuntime.current?.publish("app.sup.habit", json: ["sender": .string(envelope.sender)])
        case "app.sup.hang":
            hang()
        case "app.sup.work":
            let bursts = max(1, envelope.bodyValue["bursts"]?.intValue ?? 1), gap = envelope.bodyValue["gapMs"]?.intValue ?? 0
            for burst in 0..<bursts {
                if burst > 0 { usleep(UInt32(gap * 1_000)) }  // the plugin's own pause between bursts of work
                spin(cpuMilliseconds: (envelope.bodyValue["ms"]?.intValue ?? 0) / bursts)
            }
            try? PluginRuntime.current?.publish("app.sup.worked", json: [:])
        case "app.sup.publish-when-stopped":
            waitUntilTheBrokerIsStopped()
            try? PluginRuntime.current?.publish("app.sup.frozen", json: ["n": envelope.bodyValue["n"] ?? .null])
        case "app.sup.ask":
            ask(envelope.bodyValue["n"] ?? .null)
        case "app.sup.ask-from-task":
            let n = envelope.bodyValue["n"] ?? .null, asked = PendingAnswer<Bool>()
            Task.detached {
                ask(n)
                asked.complete(true)
            }
            _ = asked.wait(milliseconds: 30_000)
        case "app.sup.calls":
            makeCalls(envelope.bodyValue["n"] ?? .null, cutAt: envelope.bodyValue["cutAt"]?.intValue ?? -1)
        case "app.sup.echo-then-hang":
            // The marker before the echo: a broker that kills itself as it saves the echo takes this process with it,
            // perhaps before a marker made after the echo, and the next process would hang again.
            let marker = Fixture.home + "/\(name)-hung-once"
            let made = open(marker, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
            if made < 0 && errno != EEXIST { fail("cannot make \(marker): errno \(errno)", status: 1) }
            let first = made >= 0
            if first { close(made) }
            try? PluginRuntime.current?.publish("app.sup.echo", json: ["n": envelope.bodyValue["n"] ?? .null])
            if first { hang() }
        default:
            break
        }
    }
}

func ask(_ n: JSONValue) {
    guard let runtime = PluginRuntime.current else { return }
    do {
        try runtime.publish("app.sup.asking", json: ["n": n])
        let reply = try runtime.callRaw("x.\(name).question.request", body: JSONValue.object(["n": n]).jsonBytes)
        try runtime.publish("app.sup.answered", json: ["n": n, "answer": reply.bodyValue])
    } catch {
        try? runtime.publish("app.sup.call-failed", json: ["n": n, "error": .string("\(error)")])
    }
}

func makeCalls(_ n: JSONValue, cutAt: Int64) {
    guard let runtime = PluginRuntime.current else { return }
    let calls: [() throws -> Void] = [
        { _ = try AuthorizationCenter.shared.requestAuthorization(for: .individual) },
        { try ManagedSettingsStore(named: "sup").shield.write(ShieldSettings(applicationCategories: .all())) },
        { _ = try DeviceActivityCenter().monitoredActivities() },
    ]
    let marker = Fixture.home + "/\(name)-cut"
    do {
        for (step, call) in calls.enumerated() {
            try runtime.publish("app.sup.step", json: ["n": n, "step": .int(Int64(step))])
            if step == cutAt && !FileManager.default.fileExists(atPath: marker) {
                waitUntilTheBrokerIsStopped()
                _ = FileManager.default.createFile(atPath: marker, contents: nil)
            }
            try call()
        }
        try runtime.publish("app.sup.calls-done", json: ["n": n])
    } catch {
        try? runtime.publish("app.sup.call-failed", json: ["n": n, "error": .string("\(error)")])
    }
}

func option(_ name: String) -> String? {
    CommandLine.arguments.firstIndex(of: name).flatMap { $0 + 1 < CommandLine.arguments.count ? CommandLine.arguments[$0 + 1] : nil }
}

func hear(_ echo: Envelope) {
    let path = Fixture.home + "/\(name)-heard"
    guard let file = FileHandle(forWritingAtPath: path) ?? (FileManager.default.createFile(atPath: path, contents: nil) ? FileHandle(forWritingAtPath: path) : nil) else {
        fail("cannot write \(path)", status: 5)
    }
    file.seekToEndOfFile()
    file.write(Data("\(echo.seq) \(echo.bodyValue["n"]?.jsonText ?? "null")\n".utf8))
    file.closeFile()
}

func hang() -> Never {
    signal(SIGTERM, SIG_DFL)  // so stopping the broker still ends this process at once
    while true { pause() }
}

/// Where the fixture keeps what outlives its process: its container (`HOME`), which a sandbox shows it.
enum Fixture {
    /// Where the markers go: the plugin's home, which its sandbox lets it write.
    static var home: String { ProcessInfo.processInfo.environment["HOME"] ?? "." }
    /// What the next start is asked to do before its hello (`app.sup.crash-then-start-slowly`).
    static var slowStart: String { home + "/\(name)-slow-start" }
}

/// Returns once the broker (this process's parent) is stopped: what is published next stays unread. Only an
/// unsandboxed process sees its broker (`--no-sandbox`).
func waitUntilTheBrokerIsStopped() {
    if ProcessInfo.processInfo.environment["SHIELDBUS_SANDBOX"] != nil { fail("watching the broker's process needs `shieldbus run --no-sandbox`", status: 6) }
    let broker = getppid()
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
        // /proc/<pid>/stat: "pid (name) state …"; T is stopped.
        let stat = (try? String(contentsOfFile: "/proc/\(broker)/stat", encoding: .utf8)) ?? ""
        if stat.split(separator: ")").last?.split(separator: " ").first == "T" { return }
        usleep(1_000)  // a poll with a deadline
    }
    fail("the broker (pid \(broker)) did not stop", status: 4)
}

/// Says hello with `json` (name and pid added) and reports the broker's answer, as a foreign plugin would. The
/// members are added to the text as written, so a hello may write a key twice as a foreign plugin's might.
func sayRawHello(_ json: String) throws -> Never {
    guard case .object(let given)? = try? JSONValue(parsingLeniently: Array(json.utf8), keeping: .lastKept),
          let close = json.lastIndex(of: "}") else { fail("--raw-hello needs a JSON object", status: 2) }
    var added: [String: JSONValue] = ["name": .string(name), "pid": .int(Int64(getpid()))]
    // Its launch credential: without it the broker would refuse any hello under this name, whatever else is wrong.
    if let credential = ProcessInfo.processInfo.environment[BusCredential.environmentKey] { added["credential"] = .string(credential) }
    let members = String(decoding: JSONValue.object(added).jsonBytes.dropFirst().dropLast(), as: UTF8.self)
    let hello = String(json[..<close]) + (given.isEmpty ? "" : ",") + members + "}"
    let endpoint = ProcessInfo.processInfo.environment["SHIELDBUS_ENDPOINT"] ?? RuntimeDirectory.resolve(nil).brokerEndpoint()
    let context = try Context()
    let socket = try Socket(context, .dealer)
    try socket.connect(endpoint)
    _ = try socket.send([Array("hello".utf8), Array(hello.utf8)])
    try socket.setReceiveTimeout(milliseconds: 10_000)
    guard let reply = try socket.receive(), reply.count == 2 else { fail("no answer from the broker", status: 1) }
    let answer = (try? JSONValue(parsing: reply[1])) ?? .null
    if String(decoding: reply[0], as: UTF8.self) == "error" {
        fail("hello refused: \(answer["message"]?.stringValue ?? answer.jsonText)", status: 1)
    }
    fail("expected the broker to refuse the hello, got: \(answer.jsonText)", status: 1)
}

let arguments = CommandLine.arguments
if arguments.contains("--crash-at-start") { fail("crashing at start, as asked", status: 3) }
// As a broken build does until it is fixed: crashes at start while the file exists.
if let broken = option("--crash-at-start-while"), FileManager.default.fileExists(atPath: broken) { fail("crashing at start while \(broken) exists", status: 3) }
// A start slow before its hello, as `app.sup.crash-then-start-slowly` asked: at work (CPU) or hung (asleep).
if let asked = try? String(contentsOfFile: Fixture.slowStart, encoding: .utf8) {
    try? FileManager.default.removeItem(atPath: Fixture.slowStart)
    FileManager.default.createFile(atPath: Fixture.slowStart + "-done", contents: nil)
    let words = asked.split(separator: " "), ms = words.count == 2 ? Int64(words[1]) ?? 0 : 0
    if words.first == "spin" { spin(cpuMilliseconds: ms) } else { usleep(UInt32(ms * 1_000)) }
}
// The plugin's first process slow before its hello, as --slow-first-start asks: at work (spin) or hung (sleep).
let firstStartDone = Fixture.home + "/\(name)-first-start-done"
if let how = option("--slow-first-start"), let index = arguments.firstIndex(of: "--slow-first-start"), index + 2 < arguments.count,
   let ms = Int64(arguments[index + 2]), !FileManager.default.fileExists(atPath: firstStartDone) {
    FileManager.default.createFile(atPath: firstStartDone, contents: nil)
    if how == "spin" { spin(cpuMilliseconds: ms) } else { usleep(UInt32(ms * 1_000)) }
}
if let index = arguments.firstIndex(of: "--raw-hello"), index + 1 < arguments.count {
    do { try sayRawHello(arguments[index + 1]) } catch { fail("\(error)", status: 1) }
}
PluginHost.run { SupervisedFixture() }
