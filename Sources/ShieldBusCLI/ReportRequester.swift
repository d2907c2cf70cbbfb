import BusClient
import BusProtocol
import BusTools
import DeviceAPI
import Foundation
import UsageReports

/// Asks the running broker's report builder for reports, as a tool: `report.daily.request` / `report.weekly.request`
/// `{"date": "YYYY-MM-DD"}`, answered with `{"ok": true, "value": <report>}` (bus coding: times in milliseconds).
struct ReportRequester {
    let runtimeDir: String?
    /// The local day asked for; nil for today on the bus clock.
    let date: String?
    var timeoutMilliseconds: Int64 = 5000

    func daily() throws -> DailyReport { try ask("report.daily.request", DailyReport.self) }
    func weekly() throws -> WeeklyReport { try ask("report.weekly.request", WeeklyReport.self) }

    private func ask<Report: Codable & Hashable>(_ topic: String, _ type: Report.Type) throws -> Report {
        let name = BusTool.name("report")
        let connection = try BusTool.connect(runtimeDir: runtimeDir, name: name, role: .tool, subscriptions: [])
        defer { connection.close() }
        let corr = "\(name)-\(topic)"
        try connection.publish(Publish(topic: topic, body: date.map { ["date": .string($0)] } ?? [:], corr: corr))
        let deadline = monotonicMilliseconds() + timeoutMilliseconds
        while monotonicMilliseconds() < deadline {
            guard case .event(let envelope, _)? = try connection.receive(timeoutMilliseconds: 200), envelope.corr == corr, envelope.isReply else { continue }
            let reply: DeviceReply<Report>
            do {
                reply = try DeviceAPICoding.decode(DeviceReply<Report>.self, from: envelope.body)
            } catch {
                throw CommandFailure("the report builder (\(envelope.source)) answered \(topic) with something that is not a \(type): \(error)")
            }
            do {
                return try reply.get()
            } catch {
                throw CommandFailure("the report builder (\(envelope.source)) refused: \(error)")
            }
        }
        throw CommandFailure("no report builder answered \(topic) within \(timeoutMilliseconds) ms: is a plugin with role report running? (see `shieldbus status`)")
    }
}
