import BusClient
import BusProtocol
import Foundation

extension BusTool {
    /// Sends the person's action to the running device (`input.<verb>.request`) and returns the reply's value,
    /// or throws the device's error.
    public static func input(runtimeDir: String?, _ verb: String, _ body: JSONValue = [:]) throws -> JSONValue {
        try request(runtimeDir: runtimeDir, tool: "do", topic: "input.\(verb).request") { _ in body }
    }

    /// Controls the bus clock (`clock.control.request`: pause, resume, speed, step, jump) and returns the clock as it
    /// is then, with the device's settings (its time zone). `speed` for speed; `to` for jump, as `ClockTarget` reads it
    /// (in the device's time zone).
    public static func controlClock(runtimeDir: String?, action: String, speed: Double? = nil, to: String? = nil) throws -> (clock: JSONValue, settings: JSONValue?) {
        var settings: JSONValue?
        // A step or a jump answers once every timer on the way has fired and the plugins have handled it.
        let clock = try request(runtimeDir: runtimeDir, tool: "clock", topic: Topic.clockControlRequest, patienceMilliseconds: 60_000) { welcome in
            settings = welcome?.settings
            var body: [String: JSONValue] = ["action": .string(action)]
            if let speed { body["speed"] = .double(speed) }
            if let to {
                let zone = welcome?.settings["timeZone"]?.stringValue.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
                for (key, value) in try ClockTarget(parsing: to, now: welcome?.time ?? 0, timeZone: zone).requestFields { body[key] = .int(value) }
            }
            return .object(body)
        }
        return (clock, settings)
    }

    /// Sends a request the system answers, its body made from the broker's welcome (bus time, the device's settings),
    /// and returns the reply's value, or throws the refusal.
    public static func request(runtimeDir: String?, tool: String, topic: String, patienceMilliseconds: Int64 = 5000,
                        body: (Welcome?) throws -> JSONValue) throws -> JSONValue {
        let name = BusTool.name(tool)
        let connection = try connect(runtimeDir: runtimeDir, name: name, role: .tool, subscriptions: [])
        defer { connection.close() }
        let corr = "\(name)-1"
        try connection.publish(Publish(topic: topic, body: try body(connection.welcome), corr: corr))
        let deadline = monotonicMilliseconds() + patienceMilliseconds
        while monotonicMilliseconds() < deadline {
            switch try connection.receive(timeoutMilliseconds: 500) {
            case .event(let envelope, _)? where envelope.corr == corr && envelope.isReply:
                let reply = envelope.bodyValue
                if reply["ok"]?.boolValue == true { return reply["value"] ?? [:] }
                throw DeviceRefusal(code: reply["error"]?["code"]?.stringValue, message: reply["error"]?["message"]?.stringValue ?? "the device refused: \(reply.jsonText)",
                                    details: reply["error"])
            case .error(let report)?:
                throw DeviceRefusal(code: report.code, message: report.message)
            default:
                continue
            }
        }
        throw BusClientError.brokerNotAnswering(endpoint: RuntimeDirectory.resolve(runtimeDir).brokerEndpoint(), waitedMilliseconds: Int(patienceMilliseconds))
    }
}

/// The device (or the broker) refused a request, in its own words.
public struct DeviceRefusal: Error, CustomStringConvertible {
    public let code: String?
    public let message: String
    /// The refusal as the device sent it (`DeviceError`: code, message and, for some codes, more), if it sent one.
    public var details: JSONValue?
    public init(code: String?, message: String, details: JSONValue? = nil) {
        (self.code, self.message, self.details) = (code, message, details)
    }
    public var description: String { message }
}

extension BusTool {
    /// What a tool was asked that cannot become a request, and why.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }
}
