import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

/// Screen Time's own web settings, as WebKit and each tab's `STWebpageController` apply them in every browser:
/// Content & Privacy Restrictions ("You cannot browse this page", at once) and web limits ("You've reached your
/// limit", once the day's public browsing of a domain reaches its minutes).
///
/// These are the OS's settings, not an app's ManagedSettings: the OS draws its own view (no shield renderer is
/// asked), authorization changes do not touch them, and they match host names, so a token regeneration cannot
/// either. Usage comes from the meter, which records nothing in private tabs (`suppressUsageRecording`): a
/// private tab never uses up a limit, yet shows the limit view once public browsing has, as Safari does.
final class WebContentFilter: WebVerdicts {
    /// Why the OS refuses a page.
    enum Verdict: Equatable {
        case restricted(domain: String)
        case limitReached(domain: String, minutes: Int)
    }

    /// What a system view reports in `shield.shown`'s `stores`: the OS setting behind it.
    static let restrictionsStore = "content-restrictions"
    static let limitsStore = "screen-time-limits"

    /// Bus time is whole milliseconds, so a limit's timer may land up to half a millisecond short of it.
    private static let tolerance: TimeInterval = 0.001

    private unowned let host: any DeviceHost
    private let settings: DeviceSettings
    private let usage: any RecordedUse
    /// The device's clock: a web limit's day is the date it shows, in the zone in force.
    private let clock: DeviceClock
    /// The page in use may just have reached a limit: the screen checks it again.
    private let limitDue: () -> Void
    private var limitTimer: UInt64?

    /// The device's `restrictedDomains` and `webLimits` (of `settings`), counted on `usage`.
    init(host: any DeviceHost, settings: DeviceSettings, clock: DeviceClock, usage: any RecordedUse, limitDue: @escaping () -> Void) {
        self.clock = clock
        self.host = host
        self.settings = settings
        self.usage = usage
        self.limitDue = limitDue
    }

    /// Whether the OS refuses a page on `host` now: restrictions first, then limits, most specific domain first.
    func verdict(for host: String) -> Verdict? {
        if let domain = settings.restrictedDomains.sorted().first(where: { Self.host(host, isIn: $0) }) {
            return .restricted(domain: domain)
        }
        for (domain, minutes) in limits(covering: host) where secondsUsedToday(on: domain) >= Double(minutes * 60) - Self.tolerance {
            return .limitReached(domain: domain, minutes: minutes)
        }
        return nil
    }

    /// Arms a timer for the instant the page in use reaches a limit, if it has one; at that instant the screen
    /// checks the page again. Called whenever a public page comes into use.
    func watchCurrentUse() {
        if let limitTimer { host.bus.cancel(limitTimer) }
        limitTimer = nil
        guard let page = usage.current?.use.host else { return }
        let remaining = limits(covering: page).map { Double($0.minutes * 60) - secondsUsedToday(on: $0.domain) }
        guard let soonest = remaining.min() else { return }
        let due = (host.now.timeIntervalSince1970 + max(soonest, 0)) * 1000
        limitTimer = host.bus.schedule(at: BusTime(due.rounded(.up))) { [weak self] in
            guard let self else { return }
            limitTimer = nil
            limitDue()
            // Still in use (a day boundary reset the count meanwhile): watch again.
            watchCurrentUse()
        }
    }

    /// The view the OS draws for a verdict, and the match it reports.
    static func view(for verdict: Verdict) -> (match: ShieldMatch, configuration: ShieldConfiguration) {
        var configuration = ShieldConfiguration.default
        let store: String
        switch verdict {
        case .restricted(let domain):
            store = restrictionsStore
            configuration.title = .init(text: "You cannot browse this page", color: .black)
            configuration.subtitle = .init(text: "“\(domain)” is restricted by Content & Privacy Restrictions.", color: .darkGray)
        case let .limitReached(domain, minutes):
            store = limitsStore
            configuration.title = .init(text: "You've reached your limit", color: .black)
            configuration.subtitle = .init(text: "You've reached your \(minutes)-minute daily limit on \(domain).", color: .darkGray)
        }
        return (ShieldMatch(entryPoint: .webDomain, stores: [store]), configuration)
    }

    // MARK: Counting

    /// The limits whose domain covers `host`, most specific first.
    private func limits(covering host: String) -> [(domain: String, minutes: Int)] {
        settings.webLimits.filter { Self.host(host, isIn: $0.key) }
            .map { (domain: $0.key, minutes: $0.value) }
            .sorted { $0.domain.count != $1.domain.count ? $0.domain.count > $1.domain.count : $0.domain < $1.domain }
    }

    /// Public browsing of `domain` (and its subdomains) since the midnight of the date the device clock shows, in the
    /// zone in force (after a `time-zone` change, the new zone's), the use in progress included.
    private func secondsUsedToday(on domain: String) -> TimeInterval {
        let calendar = clock.calendar, now = host.now, shown = clock.wallTime(at: now)
        let today = DateInterval(start: clock.busInstant(showing: calendar.startOfDay(containing: shown)),
                                 end: clock.busInstant(showing: calendar.startOfNextDay(after: shown)))
        var spans = usage.history.map { (host: $0.use.host, start: $0.start, end: $0.end) }
        if let (use, since) = usage.current { spans.append((use.host, since, now)) }
        return spans.reduce(0) { total, span in
            guard let host = span.host, Self.host(host, isIn: domain) else { return total }
            let start = max(span.start, today.start), end = min(span.end, today.end)
            return total + max(0, end.timeIntervalSince(start))
        }
    }

    /// Whether `host` is `domain` or one of its subdomains.
    static func host(_ host: String, isIn domain: String) -> Bool {
        host == domain || host.hasSuffix("." + domain)
    }
}

/// What the screen asks of the OS's own web settings: whether a page is refused now.
protocol WebVerdicts: AnyObject {
    func verdict(for host: String) -> WebContentFilter.Verdict?
}
