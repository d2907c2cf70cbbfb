// report-builder: the DeviceActivityReport extension, unsandboxed — usage recorded as it happens, per-day buckets in its App-Group slice, reports on the bus.

import BusProtocol
import Foundation
import ReferenceKit
import ShieldBusSDK
import UsageReports

/// The report builder. Its ledger holds the retained days (memory grows with apps × days, not with events); every
/// change is written through to the store at once, the span in progress included, so a restart loses nothing.
final class ReportBuilder: BusPlugin {
    let options: ReportBuilderOptions
    private var recorder = UsageRecorder()
    private var books: (ledger: UsageLedger, store: DayStore)?
    /// Why there are no books, when opening them failed.
    private var failure: String?
    /// Days (and the recorder) whose last write failed (a full or read-only store): written again with the next
    /// change, so the usage is stored once space returns.
    private var unsavedDays = Set<LocalDay>()
    private var recorderUnsaved = false
    /// The local day last seen: when `clock.day-changed` falls on another day, the previous one is finished.
    private var currentDay: LocalDay?

    init(options: ReportBuilderOptions) {
        self.options = options
    }

    override var role: Role { .report }

    override var subscriptions: [String] {
        ["activity.app.", "activity.web.", DeviceTopic.home, DeviceTopic.shieldShown, DeviceTopic.shieldDismissed,
         DeviceTopic.notificationPosted, IntentTopic.gracePass, IntentTopic.nudge, DeviceTopic.restarted, DeviceTopic.osUpdated,
         DeviceTopic.dayChanged, DeviceTopic.scenarioEnded, ReportTopic.dailyRequest, ReportTopic.weeklyRequest, ReportTopic.monthlyRequest,
         ReportTopic.rangeRequest]
    }

    /// What it only records: in virtual time these cost no turn (a report request waits until all are recorded).
    override var observedTopics: [String] {
        ["activity.app.", "activity.web.", DeviceTopic.home, DeviceTopic.shieldShown, DeviceTopic.shieldDismissed,
         DeviceTopic.notificationPosted, IntentTopic.gracePass, IntentTopic.nudge, DeviceTopic.restarted, DeviceTopic.osUpdated]
    }

    override func didStart() {
        openBooks()
        // The broker's start-up bus.ready (not one for this plugin alone): the device runs afresh, and after a crash
        // what was on screen is gone, so the use in progress ends here, as the lock invariant reads a crash.
        if let runtime = PluginRuntime.current, runtime.currentEvent?.bodyValue["startup"]?.boolValue == true {
            record { $0.close(at: runtime.now) }
        }
    }

    override func handle(_ envelope: Envelope) {
        guard let runtime = PluginRuntime.current else { return }
        openBooks()
        switch envelope.topic {
        case ReportTopic.dailyRequest, ReportTopic.weeklyRequest, ReportTopic.monthlyRequest, ReportTopic.rangeRequest:
            answer(envelope, runtime: runtime)
        case DeviceTopic.dayChanged:
            guard let ledger = books?.ledger else { return }
            let day = ledger.day(containing: runtime.now)
            if let finished = currentDay, finished != day { finish(finished, runtime: runtime) }
            currentDay = day
        case DeviceTopic.scenarioEnded:
            // The person's day is over with something still open: its time so far is stored.
            record { $0.checkpoint(at: runtime.now) }
        default:
            record { $0.records(for: envelope, at: runtime.now) }
        }
    }

    // MARK: Books

    /// Loads the stored days once (events may arrive before `didStart`, while the bus gets ready).
    private func openBooks() {
        guard books == nil, failure == nil, let runtime = PluginRuntime.current else { return }
        do {
            let store = DayStore(defaults: try SharedDefaults.forPlugin(suiteName: options.appGroup))
            var ledger = UsageLedger(timeZone: runtime.timeZone)
            for usage in try store.loadAll() { try ledger.restore(usage) }
            ledger.retain(days: options.retentionDays, asOf: runtime.now)
            recorder = try store.loadRecorder()
            books = (ledger, store)
            currentDay = ledger.day(containing: runtime.now)
        } catch {
            failure = "the report builder cannot open its days in \(options.appGroup): \(error)"
            runtime.logger.critical("\(failure!)")
        }
    }

    /// Lets the recorder turn an event into records, and stores them with the recorder if it changed.
    private func record(_ change: (inout UsageRecorder) -> [UsageRecord]) {
        let before = recorder
        let records = change(&recorder)
        ingest(records, recorderChanged: recorder != before)
    }

    /// Adds records to the ledger and writes the days they changed (and the recorder, when it changed).
    private func ingest(_ records: [UsageRecord], recorderChanged: Bool) {
        guard books != nil, !records.isEmpty || recorderChanged else { return }
        var touched = unsavedDays
        let saveRecorder = recorderChanged || recorderUnsaved
        for record in records {
            do {
                touched.formUnion(try books!.ledger.ingest(record))
            } catch {
                PluginRuntime.current?.logger.error("a usage record was refused: \(error)")
            }
        }
        do {
            try books!.store.save(touched.sorted().compactMap { books!.ledger.usage(on: $0) }, recorder: saveRecorder ? recorder : nil)
            unsavedDays = []
            recorderUnsaved = false
        } catch {
            unsavedDays = touched
            recorderUnsaved = saveRecorder
            PluginRuntime.current?.reportWriteFailure("the usage of \(touched.sorted()) (kept in memory, written with the next change)", error)
        }
    }

    /// Local midnight passed: the finished day gets the use in progress up to midnight, its report and insights go
    /// on the bus and into the store, days beyond the retention are dropped, and the finished day's month is rolled up.
    private func finish(_ day: LocalDay, runtime: PluginRuntime) {
        record { $0.checkpoint(at: runtime.now) }
        guard let (ledger, store) = books else { return }
        let report = ledger.dailyReport(for: ledger.dateInterval(of: day).start)
        do {
            try runtime.publish(ReportTopic.daily, report)
            try runtime.publish(ReportTopic.insight, DayInsights(day: day, insights: report.insights))
            try store.saveLatest(report)
            books!.ledger.retain(days: options.retentionDays, asOf: runtime.now)
            try store.removeDays(before: ledger.day(containing: runtime.now).adding(days: 1 - options.retentionDays))
            try store.saveRollup(of: LocalMonth(containing: day))
        } catch {
            runtime.logger.error("could not publish or store the report of \(day): \(error)")
        }
    }

    // MARK: Requests

    /// Answers `report.daily.request` / `report.weekly.request` `{"date": "YYYY-MM-DD"}` (default today),
    /// `report.monthly.request` `{"month": "YYYY-MM"}` (default this month) and `report.range.request`
    /// `{"from", "to"}`, counting the use in progress up to now.
    private func answer(_ request: Envelope, runtime: PluginRuntime) {
        let body: [UInt8]
        do {
            guard var ledger = books?.ledger else {
                throw DeviceError(code: "reports-unavailable", message: failure ?? "the report builder has not opened its days yet")
            }
            if let inProgress = recorder.inProgress(at: runtime.now) { try ledger.ingest(inProgress) }
            let today = ledger.day(containing: runtime.now)
            switch request.topic {
            case ReportTopic.dailyRequest:
                let day = try requestedDay(request, "date", default: today)
                body = DeviceAPICoding.encode(DeviceReply.success(ledger.dailyReport(for: ledger.dateInterval(of: day).start)))
            case ReportTopic.weeklyRequest:
                let day = try requestedDay(request, "date", default: today)
                body = DeviceAPICoding.encode(DeviceReply.success(ledger.weeklyReport(endingOn: ledger.dateInterval(of: day).start)))
            case ReportTopic.monthlyRequest:
                body = DeviceAPICoding.encode(DeviceReply.success(ledger.monthlyReport(for: try requestedMonth(request, default: today))))
            default:
                let from = try requestedDay(request, "from", default: nil), to = try requestedDay(request, "to", default: nil)
                do {
                    body = DeviceAPICoding.encode(DeviceReply.success(try ledger.rangeReport(from: from, to: to)))
                } catch let error as ReportRangeError {
                    throw DeviceError(code: "bad-range", message: error.description)
                }
            }
        } catch let error as DeviceError {
            body = DeviceAPICoding.encode(DeviceReply<NoValue>.failure(error))
        } catch {
            body = DeviceAPICoding.encode(DeviceReply<NoValue>.failure(DeviceError(code: "internal", message: "\(error)")))
        }
        do {
            try runtime.reply(to: request, body: body)
        } catch {
            runtime.logger.error("could not answer \(request.topic) from \(request.source): \(error)")
        }
    }

    /// The local day in the request's `field`, else `fallback` (required when nil).
    private func requestedDay(_ request: Envelope, _ field: String, default fallback: LocalDay?) throws -> LocalDay {
        guard let value = request.bodyValue[field] else {
            guard let fallback else { throw DeviceError(code: "bad-date", message: "'\(field)' is required: a local day like 2026-11-25") }
            return fallback
        }
        guard let text = value.stringValue, let day = LocalDay(text) else {
            throw DeviceError(code: "bad-date", message: "'\(field)' is a local day like 2026-11-25, got \(value.jsonText)")
        }
        return day
    }

    /// The month in the request's `month`, else the month of `today`.
    private func requestedMonth(_ request: Envelope, default today: LocalDay) throws -> LocalMonth {
        guard let value = request.bodyValue["month"] else { return LocalMonth(containing: today) }
        guard let text = value.stringValue, let month = LocalMonth(text) else {
            throw DeviceError(code: "bad-month", message: "'month' is a month like 2026-11, got \(value.jsonText)")
        }
        return month
    }
}

/// `report.insight`: a finished day's insights.
struct DayInsights: Codable, Hashable {
    let day: LocalDay
    let insights: Insights
}

/// `report-builder`'s program: its `main` runs it (after setting the process's heap thresholds), and a test hosts it
/// in its own process.
public enum ReportBuilderPlugin {
    public static let program = PluginProgram.options(ReportBuilderOptions.self) { ReportBuilder(options: $0) }
}
