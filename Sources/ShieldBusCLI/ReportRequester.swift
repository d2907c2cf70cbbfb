import BusClient
import BusProtocol
import DeviceAPI
import Foundation
import UsageReports

/// Where `shieldbus report` gets its reports: the running broker's report builder, or the builder's store.
protocol ReportSource {
    /// Says where the numbers come from, for the person reading them.
    var origin: String { get }
    /// The daily report of `day` (nil: today).
    func daily(_ day: LocalDay?) throws -> DailyReport
    /// The weekly report of the 7 days ending on `day` (nil: today).
    func weekly(_ day: LocalDay?) throws -> WeeklyReport
    /// The monthly report of `month` (nil: this month).
    func monthly(_ month: LocalMonth?) throws -> RangeReport
    /// The report of `from` … `to`, both included.
    func range(from: LocalDay, to: LocalDay) throws -> RangeReport
}

/// Asks the running broker's report builder for reports, as a tool: `report.<kind>.request`, answered with
/// `{"ok": true, "value": <report>}` (bus coding: times in milliseconds). The use in progress is included.
struct ReportRequester: ReportSource {
    let runtimeDir: String?
    var timeoutMilliseconds: Int64 = 5000

    var origin: String {
        "asked the report builder of the broker in \(RuntimeDirectory.resolve(runtimeDir).path) (the use in progress included)"
    }

    func daily(_ day: LocalDay?) throws -> DailyReport {
        try ask("report.daily.request", day.map { ["date": .string($0.description)] } ?? [:], DailyReport.self)
    }

    func weekly(_ day: LocalDay?) throws -> WeeklyReport {
        try ask("report.weekly.request", day.map { ["date": .string($0.description)] } ?? [:], WeeklyReport.self)
    }

    func monthly(_ month: LocalMonth?) throws -> RangeReport {
        try ask("report.monthly.request", month.map { ["month": .string($0.description)] } ?? [:], RangeReport.self)
    }

    func range(from: LocalDay, to: LocalDay) throws -> RangeReport {
        try ask("report.range.request", ["from": .string(from.description), "to": .string(to.description)], RangeReport.self)
    }

    private func ask<Report: Codable & Hashable>(_ topic: String, _ body: JSONValue, _ type: Report.Type) throws -> Report {
        let name = BusTool.name("report")
        let connection = try BusTool.connect(runtimeDir: runtimeDir, name: name, role: .tool, subscriptions: [])
        defer { connection.close() }
        let corr = "\(name)-\(topic)"
        try connection.publish(Publish(topic: topic, body: body, corr: corr))
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
