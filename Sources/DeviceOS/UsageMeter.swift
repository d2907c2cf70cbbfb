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
final class UsageMeter {
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

    private unowned let device: DeviceOS
    /// What is being used now, and since when (nil: nothing is, or it is private).
    private(set) var current: (use: Use, since: Date)?
    /// Recent spans (eight days), for events with `includesPastActivity` and for replaying an interval's use.
    private(set) var history: [Span] = []
    private static let horizon: TimeInterval = 8 * 86_400

    /// The use in progress as last stored, and since when it was not yet recorded as a span.
    private struct UseInProgress: Codable {
        var use: Use
        var since: Date
    }
    private static let inProgressKey = "usage.inProgress"
    /// What a killed broker was still measuring (nil after an orderly end or a simulated crash, which record it).
    private var leftInProgress: UseInProgress?

    /// The meter with the history stored in the device state.
    init(device: DeviceOS) throws {
        self.device = device
        history = try device.state.usageSpans(Span.self)
        leftInProgress = try device.state.load(UseInProgress?.self, key: Self.inProgressKey) ?? nil
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
        end()
        current = (use, device.now)
        storeUseInProgress()
        device.activity.usageChanged()
    }

    /// The current use stops now.
    func end() {
        guard current != nil else { return }
        flush()
        current = nil
        storeUseInProgress()
        device.activity.usageChanged()
    }

    /// Stops counting without a trace of what is in use (a restart ends it).
    func pause() { end() }

    /// Records the current use up to now and continues from now.
    func flush() {
        guard let (use, since) = current else { return }
        let now = device.now
        guard now > since else { return }
        let span = Span(use: use, start: since, end: now)
        current = (use, now)
        history.append(span)
        let horizon = now.addingTimeInterval(-Self.horizon)
        if let first = history.first, first.end < horizon { history.removeAll { $0.end < horizon } }
        do {
            try device.state.appendUsage(span, endMilliseconds: busTime(span.end), horizonMilliseconds: busTime(horizon))
        } catch {
            // Counted in memory all the same, and written with the next span once there is room.
            device.storageFailed("cannot record usage in \(device.state.path): \(error)")
        }
        storeUseInProgress()
        device.activity.record(usageSpan(span))
    }

    private func storeUseInProgress() {
        device.save(current.map { UseInProgress(use: $0.use, since: $0.since) }, key: Self.inProgressKey)
    }

    /// A span as DeviceActivity sees it, in the current token epoch.
    func usageSpan(_ span: Span) -> UsageSpan {
        UsageSpan(subject: subject(span.use), start: span.start, end: span.end)
    }

    func subject(_ use: Use) -> UsageSpan.Subject {
        let category = use.categoryID.map(device.tokens.category)
        if let bundle = use.bundleIdentifier { return .application(device.tokens.application(bundle), category: category) }
        let domain = device.catalog.domain(use.host ?? "")?.domain ?? use.host ?? ""
        return .webDomain(device.tokens.webDomain(domain), category: category)
    }

    /// Spans overlapping an interval, in order, in the current token epoch.
    func spans(overlapping interval: DateInterval) -> [UsageSpan] {
        history.filter { $0.end > interval.start && $0.start < interval.end }.map(usageSpan)
    }
}
