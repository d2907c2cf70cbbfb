import BusClient
import BusProtocol
import Foundation

extension BusTool {
    /// Sends the person's action to the running device (`input.<verb>.request`) and returns the reply's value,
    /// or throws the device's error.
    public static func input(runtimeDir: String?, _ verb: String, _ body: JSONValue = [:]) throws -> JSONValue {
        try request(runtimeDir: runtimeDir, "input.\(verb).request", body, as: "do")
    }

    /// Sends a request the OS answers (`{ok, value}` or `{ok: false, error}`) as the tool `tool`, and returns the
    /// reply's value, or throws the refusal.
    public static func request(runtimeDir: String?, _ topic: String, _ body: JSONValue, as tool: String) throws -> JSONValue {
        let name = BusTool.name(tool)
        let connection = try connect(runtimeDir: runtimeDir, name: name, role: .tool, subscriptions: [])
        defer { connection.close() }
        let corr = "\(name)-1"
        try connection.publish(Publish(topic: topic, body: body, corr: corr))
        let deadline = monotonicMilliseconds() + 5000
        while monotonicMilliseconds() < deadline {
            switch try connection.receive(timeoutMilliseconds: 500) {
            case .event(let envelope, _)? where envelope.corr == corr && envelope.isReply:
                let reply = envelope.bodyValue
                if reply["ok"]?.boolValue == true { return reply["value"] ?? [:] }
                throw DeviceRefusal(code: reply["error"]?["code"]?.stringValue, message: reply["error"]?["message"]?.stringValue ?? "the device refused: \(reply.jsonText)")
            case .error(let report)?:
                throw DeviceRefusal(code: report.code, message: report.message)
            default:
                continue
            }
        }
        throw BusClientError.brokerNotAnswering(endpoint: RuntimeDirectory.resolve(runtimeDir).brokerEndpoint(), waitedMilliseconds: 5000)
    }
}

/// The device (or the broker) refused a request, in its own words.
public struct DeviceRefusal: Error, CustomStringConvertible {
    public let code: String?
    public let message: String
    public var description: String { message }
}
