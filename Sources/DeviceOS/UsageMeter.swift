import BusProtocol
import Configuration
import DeviceAPI
import Foundation
import ScreenTime

/// Measures use of the foreground app or web page and feeds it, span by span, to DeviceActivity's counters.
///
/// History is kept in the OS's own names (bundle ids, hosts), not tokens, so it survives a token regeneration;
/// private browsing records nothing (`suppressUsageRecording`), as Safari does. Every span is stored in the device
/// state as it is recorded: on iOS the use counted toward a threshold is the system's and survives a restart or a
/// crash, so after a reload DeviceActivity replays the running interval's use from it.
/// The use in progress is stored too: a broker killed by SIGKILL records nothing as it dies, and its successor
/// counts that use up to its own start instead of forgetting it.
final class UsageMeter: MeteredUse, RecordedUse {
    /// Something in use, in the OS's own names.
    struct Use: Equatable, Codable {
        var bundleIdentifier: String?
        var host: String?
        var categoryID: String?
    }

    struct Span: Codable {
        var use: Use
        var start: Date
        var end: Date
    }

    private unowned let host: any DeviceHost
    private let directory: DeviceDirectory
    private let events: Events
    /// What is being used now, and since when (nil: nothing is, or it is private).
    private(set) var current: (use: Use, since: Date)?
    /// Recent spans (eight days), for events with `includesPastActivity` and for replaying an interval's use.
    private(set) var history: [Span] = []
    private static let horizon: TimeInterval = 8 * 86_400

    /// The use in progress as last stored, and since when it was not yet recorded as a span.
    struct UseInProgress: Codable {
        var use: Use
        var since: Date
    }
    private static let inProgressKey = "usage.inProgress"
    /// What a killed broker was still measuring (nil after an orderly end or a simulated crash, which record it).
    private var leftInProgress: UseInProgress?

    /// What the meter tells DeviceActivity, which counts the use toward its thresholds.
    struct Events {
        /// What is in use changed (a use began or ended): the next threshold is somewhere else.
        var useChanged: () -> Void
        /// A span of use was recorded.
        var recorded: (UsageSpan) -> Void
    }

    /// The meter with the history stored in the device state.
    init(host: any DeviceHost, directory: DeviceDirectory, events: Events) throws {
        self.host = host
        self.directory = directory
        self.events = events
        history = try host.state.usageSpans(Span.self)
        leftInProgress = try host.state.load(UseInProgress?.self, key: Self.inProgressKey) ?? nil
    }

    /// Records the use a killed broker left in progress, up to now (this broker's start: the screen starts afresh,
    /// as after a simulated crash). Call once the bus runs and before DeviceActivity plans its intervals, which
    /// replay the stored use.
    func recordUseLeftInProgress() {
        guard let left = leftInProgress else { return }
        leftInProgress = nil
        current = (left.use, left.since)
        end()
    }

    func begin(app: CatalogApp) {
        start(Use(bundleIdentifier: app.bundleIdentifier, host: nil, categoryID: app.categoryID))
    }

    func begin(webDomain: String, categoryID: String?, isPrivate: Bool) {
        guard !isPrivate else { return }
        start(Use(bundleIdentifier: nil, host: webDomain, categoryID: categoryID))
    }

    private func start(_ use: Use) {
        let next = UseInProgress(use: use, since: host.now)
        if current == nil { saveInProgress(next) } else { end(storing: next, at: next.since) }
        current = (use, next.since)
        events.useChanged()
    }

    /// The current use stops now.
    func end() {
        guard current != nil else { return }
        end(storing: nil, at: host.now)
    }

    /// Ends the current use, storing `next` as the use in progress in the transaction of its last span: the span and
    /// what follows it are stored together or not at all, so a crash between them neither counts the span twice nor
    /// loses the use that follows.
    private func end(storing next: UseInProgress?, at now: Date) {
        if !flush(storing: next, at: now) { saveInProgress(next) }
        current = nil
        events.useChanged()
    }

    /// Stops counting without a trace of what is in use (a restart ends it).
    func pause() { end() }

    /// Records the current use up to now and continues from now.
    func flush() {
        guard let (use, _) = current else { return }
        let now = host.now
        flush(storing: UseInProgress(use: use, since: now), at: now)
    }

    private func saveInProgress(_ stored: UseInProgress?) {
        host.saving(Self.inProgressKey) { try $0.save(json: UseInProgress.json(stored), key: Self.inProgressKey) }
    }

    /// Records the current use up to `now`, with `stored` (what follows from `now`) as the use in progress in the
    /// span's transaction, and continues from `now`: one reading of the clock, so the span and what follows it meet.
    /// Returns whether there was a span to record (none when no time passed).
    @discardableResult
    private func flush(storing stored: UseInProgress?, at now: Date) -> Bool {
        guard let (use, since) = current else { return false }
        guard now > since else { return false }
        let span = Span(use: use, start: since, end: now)
        current = (use, now)
        history.append(span)
        let horizon = now.addingTimeInterval(-Self.horizon)
        forget(endedBefore: horizon)
        host.state.stage(json: UseInProgress.json(stored), key: Self.inProgressKey)
        do {
            try host.state.appendUsage(json: span.json, endMilliseconds: busTime(span.end), horizonMilliseconds: busTime(horizon))
        } catch {
            // Counted in memory all the same, and written with the next span once there is room (the use in
            // progress, staged, with it).
            host.storageFailed("cannot record usage in \(host.state.path): \(error)")
        }
        events.recorded(usageSpan(span))
        return true
    }

    /// Forgets the spans that ended before `horizon`. Spans are recorded as they end, so those are the oldest: they
    /// are dropped from the front in one move, once the rest is found to hold none that ended before it (a span kept
    /// out of order falls back to removing each that did).
    private func forget(endedBefore horizon: Date) {
        var expired = 0
        while expired < history.count, history[expired].end < horizon { expired += 1 }
        guard expired > 0 else { return }
        var later = expired
        while later < history.count, history[later].end >= horizon { later += 1 }
        if later == history.count {
            history.removeFirst(expired)
        } else {
            history.removeAll { $0.end < horizon }  // a later span ended earlier: each is looked at
        }
    }

    /// A span as DeviceActivity sees it, in the current token epoch.
    func usageSpan(_ span: Span) -> UsageSpan {
        UsageSpan(subject: subject(span.use), start: span.start, end: span.end)
    }

    func subject(_ use: Use) -> UsageSpan.Subject {
        let category = use.categoryID.map(directory.tokens.category)
        if let bundle = use.bundleIdentifier { return .application(directory.tokens.application(bundle), category: category) }
        let domain = directory.catalog.domain(use.host ?? "")?.domain ?? use.host ?? ""
        return .webDomain(directory.tokens.webDomain(domain), category: category)
    }

    /// What is in use now, as DeviceActivity counts it, and since when.
    var currentUse: (subject: UsageSpan.Subject, since: Date)? {
        current.map { (subject($0.use), $0.since) }
    }

    /// Spans overlapping an interval, in order, in the current token epoch.
    func spans(overlapping interval: DateInterval) -> [UsageSpan] {
        history.filter { $0.end > interval.start && $0.start < interval.end }.map(usageSpan)
    }
}

/// What DeviceActivity asks of the meter: the use in progress and the use recorded, in today's tokens.
protocol MeteredUse: AnyObject {
    /// What is in use now, and since when (nil: nothing, or a private page).
    var currentUse: (subject: UsageSpan.Subject, since: Date)? { get }
    /// Records the use in progress up to now (its span is told as `recorded`) and goes on counting from now.
    func flush()
    /// Spans overlapping an interval, in order.
    func spans(overlapping interval: DateInterval) -> [UsageSpan]
}

/// What the web limits ask of the meter: the use in the OS's own names (hosts), recorded and in progress.
protocol RecordedUse: AnyObject {
    var current: (use: UsageMeter.Use, since: Date)? { get }
    var history: [UsageMeter.Span] { get }
}

// The use in progress and each span are stored at every change of what is in use, on the broker's loop: written
// byte by byte, the very bytes `DeviceAPICoding.encode` writes for them (keys sorted, absent names left out, dates in
// milliseconds), which `DevicePartsTests` checks over many values.

extension UsageMeter.Use {
    func writeJSON(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        var isEmpty = true
        Self.member(#""bundleIdentifier":"#, bundleIdentifier, isEmpty: &isEmpty, into: &out)
        Self.member(#""categoryID":"#, categoryID, isEmpty: &isEmpty, into: &out)
        Self.member(#""host":"#, host, isEmpty: &isEmpty, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// `key` (quoted, with its colon) and `value`, after a comma unless it is the first; nothing for an absent value.
    private static func member(_ key: String, _ value: String?, isEmpty: inout Bool, into out: inout [UInt8]) {
        guard let value else { return }
        if !isEmpty { out.append(UInt8(ascii: ",")) }
        isEmpty = false
        out.append(contentsOf: key.utf8)
        JSONWriter.writeString(value, into: &out)
    }
}

extension UsageMeter.Span {
    /// `DeviceAPICoding.encode(self)`'s bytes.
    var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        out.append(contentsOf: #"{"end":"#.utf8)
        JSONWriter.writeInteger(busTime(end), into: &out)
        out.append(contentsOf: #","start":"#.utf8)
        JSONWriter.writeInteger(busTime(start), into: &out)
        out.append(contentsOf: #","use":"#.utf8)
        use.writeJSON(into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension UsageMeter.UseInProgress {
    /// `DeviceAPICoding.encode(stored)`'s bytes (`null` for none).
    static func json(_ stored: Self?) -> [UInt8] {
        guard let stored else { return Array("null".utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(112)
        out.append(contentsOf: #"{"since":"#.utf8)
        JSONWriter.writeInteger(busTime(stored.since), into: &out)
        out.append(contentsOf: #","use":"#.utf8)
        stored.use.writeJSON(into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}
