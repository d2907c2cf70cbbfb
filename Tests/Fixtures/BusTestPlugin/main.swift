// bus-test-plugin: a minimal plugin for the bus tests — publishes numbered events and records what it receives.
//
// Usage: bus-test-plugin NAME OUTPUT-FILE PUBLISH-TOPIC COUNT EXPECTED [SUBSCRIPTION ...]
// Waits until a `app.test.go` event arrives, publishes COUNT events on PUBLISH-TOPIC, appends every received
// envelope (JSON line) to OUTPUT-FILE, acknowledges each, and exits 0 once it has received EXPECTED events
// other than the go signal.

import BusClient
import BusProtocol
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 6, let count = Int(arguments[4]), let expected = Int(arguments[5]) else {
    FileHandle.standardError.write(Data("usage: bus-test-plugin NAME OUTPUT PUBLISH-TOPIC COUNT EXPECTED [SUBSCRIPTION ...]\n".utf8))
    exit(2)
}
let name = arguments[1]
let output = arguments[2]
let topic = arguments[3]
let subscriptions = Array(arguments.dropFirst(6)) + ["app.test.go"]
let endpoint = ProcessInfo.processInfo.environment["SHIELDBUS_ENDPOINT"] ?? RuntimeDirectory.resolve(nil).brokerEndpoint()
// Created only when missing: `createFile` writes by renaming a new file over the path, which as root would turn a
// device such as /dev/null into a regular file for every process on the machine.
if !FileManager.default.fileExists(atPath: output) { _ = FileManager.default.createFile(atPath: output, contents: nil) }
let file = FileHandle(forWritingAtPath: output)!

do {
    let connection = try BusConnection(endpoint: endpoint, hello: Hello(name: name, role: .generic, subscriptions: subscriptions, pid: Int64(getpid())))
    try connection.connect()
    var received = 0
    var started = false
    while received < expected || !started {
        guard let message = try connection.receive(timeoutMilliseconds: 30_000) else {
            FileHandle.standardError.write(Data("\(name): timed out with \(received) of \(expected) events\n".utf8))
            exit(3)
        }
        guard case .event(let envelope, _) = message else { continue }
        if envelope.topic == "app.test.go" {
            if !started {
                started = true
                for n in 1...max(count, 1) where count > 0 {
                    try connection.publish(Publish(topic: topic, body: ["from": .string(name), "n": .int(Int64(n))]))
                }
            }
        } else {
            received += 1
            file.write(Data(WireCodec.encodeEnvelope(envelope) + [0x0A]))
        }
        try connection.acknowledge(seq: envelope.seq)
    }
    try file.close()
    connection.close()
    exit(0)
} catch {
    FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
    exit(1)
}
