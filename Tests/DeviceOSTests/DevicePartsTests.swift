import BusProtocol
import Configuration
import DeviceAPI
@testable import DeviceOS
import Foundation
import ScreenTime
import SQLite
import ShieldBusTestSupport
import XCTest

/// Each part of the device OS built alone, in-process, on `DevicePartHost` and fakes of the few other parts it asks
/// of: what it says on the bus and what it tells the rest of the device, without a `DeviceOS` around it.
final class DevicePartsTests: XCTestCase {
    private let folder = TemporaryDirectory(prefix: "sb-parts")
    private let start: BusTime = 1_767_261_600_000  // 10:00 UTC

    // MARK: Fakes of the parts a part asks of

    private final class FakeStores: ShieldStores {
        var stores: [String: ShieldSettings] = [:]
        func matcher(for product: DeviceProduct) -> ShieldMatcher { ShieldMatcher(stores: stores) }
    }

    private final class FakeVerdicts: WebVerdicts {
        var refused: [String: WebContentFilter.Verdict] = [:]
        func verdict(for host: String) -> WebContentFilter.Verdict? { refused[host] }
    }

    private final class FakeAuthorization: AuthorizationStatuses {
        var status: AuthorizationStatus
        init(_ status: AuthorizationStatus) { self.status = status }
        func status(ofProduct product: String) -> AuthorizationStatus { status }
        func status(of plugin: String) -> AuthorizationStatus { status }
    }

    private final class FakeUse: MeteredUse, RecordedUse {
        var current: (use: UsageMeter.Use, since: Date)?
        var history: [UsageMeter.Span] = []
        var currentUse: (subject: UsageSpan.Subject, since: Date)?
        var recorded: [UsageSpan] = []
        private(set) var flushes = 0
        func flush() { flushes += 1 }
        func spans(overlapping interval: DateInterval) -> [UsageSpan] { recorded }
    }

    private func date(_ time: BusTime) -> Date { DeviceAPI.date(busTime: time) }

    // MARK: The parts

    func testTheScreenAsksTheRendererForAShieldAndHandsTheAppOverOnceTheStoresLiftIt() throws {
        let host = try DevicePartHost(folder: folder, start: start)
        host.inProcessBus.connect("shield", role: .shield)
        let stores = FakeStores()
        let instagram = try host.app("Instagram")
        stores.stores["focus"] = ShieldSettings(applications: [host.directory.tokens.application(instagram.bundleIdentifier)])
        var told: [String] = []
        let screen = Screen(host: host, directory: host.directory, stores: stores, webContent: FakeVerdicts(), events: .init(
            appInUse: { app, reason in told.append("in use: \(app.name) (\(reason))") },
            pageInUse: { domain, _, _ in told.append("page in use: \(domain)") },
            useEnded: { told.append("use ended") },
            appLeft: { app in told.append("left: \(app.name)") }))

        screen.open(instagram)
        let request = try XCTUnwrap(host.inProcessBus.events(DeviceTopic.configurationRequest).last)
        XCTAssertEqual(request.corr, "os-shield-1")
        XCTAssertTrue(screen.isAwaitingReply)
        XCTAssertEqual(told, [], "a shielded app is never in use")

        let configuration = ShieldConfiguration(title: .init(text: "Not now", color: .black))
        screen.handleReply(Envelope(seq: 99, time: start, topic: DeviceTopic.configurationReply, source: "shield", corr: request.corr,
                                    body: DeviceAPICoding.encode(ShieldConfigurationReply(configuration: configuration))))
        let shown = try DeviceAPICoding.decode(ShieldShown.self, from: try XCTUnwrap(host.inProcessBus.events(DeviceTopic.shieldShown).last).body)
        XCTAssertEqual(shown.renderedBy, "shield")
        XCTAssertEqual(shown.stores, ["focus"])

        stores.stores = [:]
        screen.reevaluate(reason: "managed-settings")
        XCTAssertEqual(host.said, [DeviceTopic.configurationRequest, DeviceTopic.shieldShown, DeviceTopic.shieldDismissed, DeviceTopic.appOpened])
        XCTAssertEqual(told, ["in use: Instagram (shield-lifted)"])
        screen.goHome()
        XCTAssertEqual(told, ["in use: Instagram (shield-lifted)", "use ended", "left: Instagram"])
    }

    func testManagedSettingsPutsAWriteInForceOnlyForAnAuthorizedAppAndTellsTheScreen() throws {
        let host = try DevicePartHost(folder: folder, start: start)
        let authorization = FakeAuthorization(.notDetermined)
        var enforced = 0
        let settings = try ManagedSettingsService(host: host, directory: host.directory, authorization: authorization) { enforced += 1 }
        let token = host.directory.tokens.application("com.burbn.instagram")
        let write = ManagedSettingsWrite(store: "focus", shield: ShieldSettings(applications: [token]))

        settings.handle(host.request(DeviceTopic.settingsWriteRequest, write, from: "app", corr: "app-1"))
        XCTAssertEqual(try host.reply("app-1", as: NoValue.self).error?.code, "unauthorized")
        XCTAssertEqual(enforced, 0)

        authorization.status = .approved
        settings.handle(host.request(DeviceTopic.settingsWriteRequest, write, from: "app", corr: "app-2"))
        XCTAssertTrue(try host.reply("app-2", as: NoValue.self).ok)
        XCTAssertEqual(enforced, 1)
        XCTAssertEqual(settings.stores["focus"], write.shield)
        XCTAssertEqual(host.inProcessBus.events(DeviceTopic.settingsChanged).count, 1)
        let reloaded = try ManagedSettingsService(host: host, directory: host.directory, authorization: authorization) {}
        XCTAssertEqual(reloaded.stores["focus"], write.shield, "in force only once device.sqlite holds it")
    }

    /// A reader is given the stores as they are now at every read, though the reply it was last given is kept while
    /// they stay as they were: a write, a removal and a token migration each show in the next read.
    func testEachReadOfTheStoresGivesThemAsTheyAreNow() throws {
        let host = try DevicePartHost(folder: folder, start: start)
        let settings = try ManagedSettingsService(host: host, directory: host.directory, authorization: FakeAuthorization(.approved)) {}
        var corr = 0
        func read() throws -> [String: ShieldSettings]? {
            corr += 1
            settings.handle(host.request(DeviceTopic.settingsReadRequest, NoValue(), from: "app", corr: "read-\(corr)"))
            return try host.reply("read-\(corr)", as: ManagedSettingsSnapshot.self).value?.stores
        }
        func write(_ shield: ShieldSettings) {
            corr += 1
            settings.handle(host.request(DeviceTopic.settingsWriteRequest, ManagedSettingsWrite(store: "focus", shield: shield), from: "app", corr: "write-\(corr)"))
        }
        XCTAssertEqual(try read(), [:])
        XCTAssertEqual(try read(), [:], "read again, unchanged")
        let shield = ShieldSettings(applications: [host.directory.tokens.application("com.burbn.instagram")])
        write(shield)
        XCTAssertEqual(try read(), ["focus": shield], "the write shows in the next read")
        write(ShieldSettings())
        XCTAssertEqual(try read(), [:], "and the removal")
    }

    func testTheUsageMeterRecordsASpanAndTellsDeviceActivity() throws {
        let host = try DevicePartHost(folder: folder, start: start)
        var changes = 0
        var recorded: [UsageSpan] = []
        let meter = try UsageMeter(host: host, directory: host.directory, events: .init(useChanged: { changes += 1 }, recorded: { recorded.append($0) }))
        let instagram = try host.app("Instagram")

        meter.begin(app: instagram)
        XCTAssertEqual(changes, 1)
        host.inProcessBus.advance(to: start + 90_000)
        meter.end()
        XCTAssertEqual(changes, 2)
        XCTAssertNil(meter.currentUse)
        let token = host.directory.tokens.application(instagram.bundleIdentifier)
        let category = host.directory.tokens.category("social")
        XCTAssertEqual(recorded, [UsageSpan(subject: .application(token, category: category), start: date(start), end: date(start + 90_000))])
        let reloaded = try UsageMeter(host: host, directory: host.directory, events: .init(useChanged: {}, recorded: { _ in }))
        XCTAssertEqual(reloaded.history.count, 1, "every span is stored as it is recorded")
    }

    /// The use in progress and a span of use, written byte by byte, are the very bytes `DeviceAPICoding.encode`
    /// writes: over values drawn with and without each name, strings needing escapes, and times from before the
    /// epoch to far ahead, whole milliseconds and not.
    func testTheUseInProgressAndASpanAreWrittenAsCodableWritesThem() {
        let strings = ["com.burbn.instagram", "", "instagram.com", "say \"hi\"", "back\\slash", "https://example.com/a/b", "tab\there",
                       "line\nbreak", "\u{00}\u{01}\u{1F}\u{7F}", "Café", "e\u{301}", "日本語", "👩‍👩‍👧", "\u{2028}\u{2029}", "social"]
        var random = SeededRandom(seed: 7)
        func name() -> String? { Bool.random(using: &random) ? strings.randomElement(using: &random)! : nil }
        func time() -> Date {
            let milliseconds = [0, -1, 1, 1_767_261_600_000, 253_402_300_799_999, -62_135_596_800_000, Int64.random(in: -(1 << 45)...(1 << 45), using: &random)]
                .randomElement(using: &random)!
            return Bool.random(using: &random) ? date(milliseconds) : Date(timeIntervalSince1970: Double(milliseconds) / 1000 + Double.random(in: -0.002...0.002, using: &random))
        }
        XCTAssertEqual(UsageMeter.UseInProgress.json(nil), DeviceAPICoding.encode(UsageMeter.UseInProgress?.none))
        for _ in 0..<5_000 {
            let use = UsageMeter.Use(bundleIdentifier: name(), host: name(), categoryID: name())
            let stored = UsageMeter.UseInProgress(use: use, since: time())
            XCTAssertEqual(UsageMeter.UseInProgress.json(stored), DeviceAPICoding.encode(stored), String(decoding: DeviceAPICoding.encode(stored), as: UTF8.self))
            XCTAssertEqual(UsageMeter.UseInProgress.json(stored), DeviceAPICoding.encode(Optional(stored)))
            let span = UsageMeter.Span(use: use, start: time(), end: time())
            XCTAssertEqual(span.json, DeviceAPICoding.encode(span), String(decoding: DeviceAPICoding.encode(span), as: UTF8.self))
            if span.json != DeviceAPICoding.encode(span) || UsageMeter.UseInProgress.json(stored) != DeviceAPICoding.encode(stored) { return }
        }
    }

    /// A registration written byte by byte is the very bytes `DeviceAPICoding.encode` writes for it: over
    /// registrations drawn with and without each optional part, dates with fractions of a millisecond among them, and
    /// again after what changes at an interval start or a callback.
    func testARegistrationIsWrittenAsCodableWritesIt() {
        let strings = ["daily", "", "say \"hi\"", "back\\slash", "a/b", "line\nbreak", "\u{00}\u{1F}", "Café", "日本語", "👩‍👩‍👧", "tok-AbC_123=="]
        var random = SeededRandom(seed: 11)
        func string() -> String { strings.randomElement(using: &random)! }
        func time() -> Date { Date(timeIntervalSince1970: Double(Int64.random(in: -(1 << 42)...(1 << 42), using: &random)) / [1, 1000].randomElement(using: &random)!) }
        func maybe<T>(_ make: () -> T) -> T? { Bool.random(using: &random) ? make() : nil }
        func components() -> DateComponents {
            [DateComponents(hour: .random(in: 0...23, using: &random), minute: .random(in: 0...59, using: &random)), DateComponents(minute: .random(in: 0...90, using: &random)),
             DateComponents(hour: 2, minute: 0, second: 30), DateComponents(day: 1), DateComponents(hour: 8, weekday: .random(in: 1...7, using: &random))].randomElement(using: &random)!
        }
        func tokens<T>(_ make: (String) -> T) -> Set<T> { Set((0..<Int.random(in: 0...3, using: &random)).map { _ in make(string()) }) }
        func event() -> DeviceActivityEvent {
            DeviceActivityEvent(applications: tokens(ApplicationToken.init(rawValue:)), categories: tokens(ActivityCategoryToken.init(rawValue:)),
                                webDomains: tokens(WebDomainToken.init(rawValue:)), threshold: components(), includesPastActivity: Bool.random(using: &random))
        }
        func crossings() -> [ThresholdCrossing] {
            (0..<Int.random(in: 0...3, using: &random)).map { _ in
                ThresholdCrossing(event: DeviceActivityEvent.Name(rawValue: string()), callback: ThresholdCrossing.Callback.allCases.randomElement(using: &random)!, date: time())
            }
        }
        for _ in 0..<3_000 {
            var registration = DeviceActivityService.Registration(
                activity: DeviceActivityName(rawValue: string()),
                schedule: DeviceActivitySchedule(intervalStart: components(), intervalEnd: components(), repeats: Bool.random(using: &random), warningTime: maybe(components)),
                events: Dictionary((0..<Int.random(in: 0...3, using: &random)).map { _ in (DeviceActivityEvent.Name(rawValue: string()), event()) }) { first, _ in first },
                registeredAt: time(), startedInterval: maybe(time), pendingStart: maybe(time), product: maybe(string), deliveredCrossings: maybe(crossings))
            XCTAssertEqual(registration.json, DeviceAPICoding.encode(registration), String(decoding: DeviceAPICoding.encode(registration), as: UTF8.self))
            (registration.startedInterval, registration.pendingStart, registration.deliveredCrossings) = (maybe(time), maybe(time), maybe(crossings))
            registration.events[DeviceActivityEvent.Name(rawValue: "added")] = event()
            XCTAssertEqual(registration.json, DeviceAPICoding.encode(registration), String(decoding: DeviceAPICoding.encode(registration), as: UTF8.self))
            if registration.json != DeviceAPICoding.encode(registration) { return }
        }
    }

    /// A switch from one app to another stores the first one's span and the second's use in progress in one
    /// transaction, as a flush stores its span and the use going on: a meter reloaded from the store right after (a
    /// broker killed there) counts the first once and the second from the switch.
    func testASwitchOfAppsStoresTheSpanAndTheNextUseInProgressTogether() throws {
        let host = try DevicePartHost(folder: folder, start: start)
        let meter = try UsageMeter(host: host, directory: host.directory, events: .init(useChanged: {}, recorded: { _ in }))
        let (instagram, focus) = (try host.app("Instagram"), try host.app("Focus"))
        func commits() throws -> Int64? {
            try SQLiteConnection(path: host.state.path, flags: [.readOnly]).withStatement("SELECT n FROM commit_tally") { try $0.step() ? try $0.int64(at: 0) : nil }
        }
        meter.begin(app: instagram)
        let before = try XCTUnwrap(try commits())
        host.inProcessBus.advance(to: start + 60_000)
        meter.flush()
        XCTAssertEqual(try commits(), before + 1, "the span and the use going on in one transaction")
        host.inProcessBus.advance(to: start + 90_000)
        meter.begin(app: focus)
        XCTAssertEqual(try commits(), before + 2, "Instagram's last span and Focus in progress in one transaction")
        host.inProcessBus.advance(to: start + 150_000)

        var recorded: [UsageSpan] = []
        let reloaded = try UsageMeter(host: host, directory: host.directory, events: .init(useChanged: {}, recorded: { recorded.append($0) }))
        XCTAssertEqual(reloaded.history.map { [$0.start, $0.end] }, [[date(start), date(start + 60_000)], [date(start + 60_000), date(start + 90_000)]],
                       "Instagram's spans, each once")
        reloaded.recordUseLeftInProgress()
        let focusToken = host.directory.tokens.application(focus.bundleIdentifier)
        let productivity = host.directory.tokens.category(focus.categoryID)
        XCTAssertEqual(recorded, [UsageSpan(subject: .application(focusToken, category: productivity), start: date(start + 90_000), end: date(start + 150_000))],
                       "Focus from the switch to the reload")
        XCTAssertNil(reloaded.currentUse)

        let again = try UsageMeter(host: host, directory: host.directory, events: .init(useChanged: {}, recorded: { _ in XCTFail("nothing left in progress") }))
        again.recordUseLeftInProgress()
        XCTAssertEqual(again.history.count, 3, "Focus' span stored with nothing in progress after it")
    }

    func testDeviceActivityStartsAnIntervalAndDeliversAThresholdTheMeteredUseReaches() throws {
        let host = try DevicePartHost(folder: folder, start: start)
        let clock = try DeviceClock(state: host.state, defaultTimeZone: host.directory.settings.timeZone)
        let authorization = FakeAuthorization(.denied)
        let use = FakeUse()
        let activity = try DeviceActivityService(host: host, directory: host.directory, clock: clock, random: DeviceRandom(seed: 1),
                                                 usage: use, authorization: authorization)
        let token = host.directory.tokens.application("com.burbn.instagram")
        let request = StartMonitoring(
            activity: DeviceActivityName("daily"),
            schedule: DeviceActivitySchedule(intervalStart: DateComponents(hour: 0, minute: 0), intervalEnd: DateComponents(hour: 23, minute: 59), repeats: true),
            events: [DeviceActivityEvent.Name("five"): DeviceActivityEvent(applications: [token], threshold: DateComponents(minute: 5))])

        activity.handle(host.request(DeviceTopic.startMonitoringRequest, request, from: "app", corr: "app-1"))
        XCTAssertEqual(try host.reply("app-1", as: NoValue.self).error?.code, "unauthorized")

        authorization.status = .approved
        activity.handle(host.request(DeviceTopic.startMonitoringRequest, request, from: "app", corr: "app-2"))
        XCTAssertTrue(try host.reply("app-2", as: NoValue.self).ok)
        activity.resume()
        XCTAssertEqual(host.inProcessBus.events(DeviceTopic.intervalDidStart).count, 1, "10:00 is inside the day's interval")

        activity.record(UsageSpan(subject: .application(token, category: nil), start: date(start), end: date(start + 299_000)))
        XCTAssertTrue(host.inProcessBus.events(DeviceTopic.eventDidReachThreshold).isEmpty)
        activity.record(UsageSpan(subject: .application(token, category: nil), start: date(start + 299_000), end: date(start + 300_000)))
        let callback = try XCTUnwrap(host.inProcessBus.events(DeviceTopic.eventDidReachThreshold).last)
        XCTAssertEqual(try DeviceAPICoding.decode(DeviceActivityCallback.self, from: callback.body).event?.rawValue, "five")
    }

    /// A monitor that registers, at each callback, an interval starting at once is called back at most
    /// `CallbackThrottle.perMinute` times in a minute: the next callback is not delivered, said as `callback-loop`, so
    /// the loop ends at the same step on every run; a minute later its callbacks go out again.
    func testAMonitorCalledBackAgainAndAgainIsThrottledWithinAMinuteOfBusTime() throws {
        let host = try DevicePartHost(folder: folder, start: start)
        let clock = try DeviceClock(state: host.state, defaultTimeZone: host.directory.settings.timeZone)
        let activity = try DeviceActivityService(host: host, directory: host.directory, clock: clock, random: DeviceRandom(seed: 1),
                                                 usage: FakeUse(), authorization: FakeAuthorization(.approved))
        activity.resume()
        var corr = 0
        func registerStartingNow() throws {
            corr += 1
            let now = Calendar(identifier: .gregorian).dateComponents(in: host.directory.settings.timeZone, from: host.now)
            let schedule = DeviceActivitySchedule(intervalStart: DateComponents(hour: now.hour, minute: now.minute),
                                                  intervalEnd: DateComponents(hour: now.hour! + 1, minute: now.minute), repeats: false)
            activity.handle(host.request(DeviceTopic.startMonitoringRequest, StartMonitoring(activity: DeviceActivityName("check"), schedule: schedule),
                                         from: "app", corr: "start-\(corr)"))
            XCTAssertTrue(try host.reply("start-\(corr)", as: NoValue.self).ok)
        }
        func loopErrors() -> Int {
            host.inProcessBus.events("bus.error").filter { (try? JSONValue(parsing: $0.body))?["code"]?.stringValue == "callback-loop" }.count
        }
        for _ in 0..<(CallbackThrottle.perMinute + 10) { try registerStartingNow() }
        XCTAssertEqual(host.inProcessBus.events(DeviceTopic.intervalDidStart).count, CallbackThrottle.perMinute, "delivered up to the limit")
        XCTAssertEqual(loopErrors(), 10, "each callback past the limit said")

        host.inProcessBus.advance(to: host.inProcessBus.now + CallbackThrottle.window)
        try registerStartingNow()
        XCTAssertEqual(host.inProcessBus.events(DeviceTopic.intervalDidStart).count, CallbackThrottle.perMinute + 1, "a minute later, delivered again")
        XCTAssertEqual(loopErrors(), 10)
    }

    /// The events of a monitored activity, as its plugins ask for them at every callback: the reply kept while the
    /// registration stays as it was, and the new events given once it is registered again or its tokens change; none
    /// once it is stopped.
    func testEachAskForAnActivitysEventsGivesItsRegistrationAsItIsNow() throws {
        let host = try DevicePartHost(folder: folder, start: start)
        let clock = try DeviceClock(state: host.state, defaultTimeZone: host.directory.settings.timeZone)
        let activity = try DeviceActivityService(host: host, directory: host.directory, clock: clock, random: DeviceRandom(seed: 1),
                                                 usage: FakeUse(), authorization: FakeAuthorization(.approved))
        let token = host.directory.tokens.application("com.burbn.instagram")
        let daily = DeviceActivityName("daily")
        let schedule = DeviceActivitySchedule(intervalStart: DateComponents(hour: 0, minute: 0), intervalEnd: DateComponents(hour: 23, minute: 59), repeats: true)
        var corr = 0
        func register(_ name: String, minutes: Int) throws {
            corr += 1
            let event = DeviceActivityEvent(applications: [token], threshold: DateComponents(minute: minutes))
            activity.handle(host.request(DeviceTopic.startMonitoringRequest, StartMonitoring(activity: daily, schedule: schedule, events: [DeviceActivityEvent.Name(name): event]),
                                         from: "app", corr: "start-\(corr)"))
            XCTAssertTrue(try host.reply("start-\(corr)", as: NoValue.self).ok)
        }
        func events() throws -> [String] {
            corr += 1
            activity.handle(host.request(DeviceTopic.eventsRequest, MonitoredEvents(activity: daily), from: "app", corr: "events-\(corr)"))
            return try XCTUnwrap(host.reply("events-\(corr)", as: MonitoredEvents.self).value).events.keys.map(\.rawValue).sorted()
        }
        try register("five", minutes: 5)
        XCTAssertEqual(try events(), ["five"])
        XCTAssertEqual(try events(), ["five"], "asked again, unchanged")
        try register("ten", minutes: 10)
        XCTAssertEqual(try events(), ["ten"], "registered again with other events")
        // An iOS update changes the events' tokens in place: the reply kept before it is not given again.
        activity.migrate(host.directory.tokens.regenerate(for: host.directory.catalog))
        corr += 1
        activity.handle(host.request(DeviceTopic.eventsRequest, MonitoredEvents(activity: daily), from: "app", corr: "events-\(corr)"))
        let migrated = try XCTUnwrap(host.reply("events-\(corr)", as: MonitoredEvents.self).value).events
        XCTAssertEqual(migrated[DeviceActivityEvent.Name("ten")]?.applications, [host.directory.tokens.application("com.burbn.instagram")])
        XCTAssertNotEqual(host.directory.tokens.application("com.burbn.instagram"), token, "the update gave the app a new token")
        corr += 1
        activity.handle(host.request(DeviceTopic.stopMonitoringRequest, StopMonitoring(activities: [daily]), from: "app", corr: "stop-\(corr)"))
        XCTAssertEqual(try events(), [], "stopped")
    }

    func testWebLimitsRefuseARestrictedPageAtOnceAndALimitedOneWhenItsMinuteIsUsed() throws {
        let host = try DevicePartHost(folder: folder, start: start) { settings in
            settings.webLimits = ["instagram.com": 1]
            settings.restrictedDomains = ["casino.example"]
        }
        let use = FakeUse()
        use.current = (UsageMeter.Use(bundleIdentifier: nil, host: "www.instagram.com", categoryID: "social"), date(start))
        var limitsDue = 0
        let clock = try DeviceClock(state: host.state, defaultTimeZone: host.directory.settings.timeZone)
        let filter = WebContentFilter(host: host, settings: host.directory.settings, clock: clock, usage: use) {
            limitsDue += 1
            // As the screen does when the OS refuses the page: it leaves use, and the meter records its span.
            if let (page, since) = use.current { use.history.append(UsageMeter.Span(use: page, start: since, end: host.now)) }
            use.current = nil
        }

        XCTAssertEqual(filter.verdict(for: "www.casino.example"), .restricted(domain: "casino.example"))
        XCTAssertNil(filter.verdict(for: "www.instagram.com"))
        filter.watchCurrentUse()
        host.inProcessBus.advance(to: start + 59_000)
        XCTAssertEqual(limitsDue, 0)
        host.inProcessBus.advance(to: start + 60_000)
        XCTAssertEqual(limitsDue, 1, "the screen is told at the limit's instant")
        XCTAssertEqual(filter.verdict(for: "www.instagram.com"), .limitReached(domain: "instagram.com", minutes: 1))
    }

    func testAuthorizationAnswersTheAppAndTellsTheDeviceOfARevocation() throws {
        let host = try DevicePartHost(folder: folder, start: start)
        var revocations = 0
        let authorization = try AuthorizationService(host: host, directory: host.directory) { revocations += 1 }

        authorization.handle(host.request(DeviceTopic.authorizationRequest, AuthorizationRequest(member: .individual), from: "app", corr: "app-1"))
        XCTAssertEqual(try host.reply("app-1", as: AuthorizationState.self).value?.status, .approved)
        XCTAssertEqual(authorization.status(of: "app"), .approved)
        authorization.revoke()
        XCTAssertEqual(authorization.status(ofProduct: "focus"), .denied)
        XCTAssertEqual(revocations, 1)
        XCTAssertEqual(host.inProcessBus.events(DeviceTopic.authorizationChanged).count, 2)
    }

    func testATappedNotificationOpensItsPostersApp() throws {
        let host = try DevicePartHost(folder: folder, start: start)
        var opened: [String] = []
        let notifications = try NotificationCenterService(host: host, directory: host.directory) { opened.append($0.name) }

        notifications.tap(id: nil)
        XCTAssertEqual(host.refusals, ["no-notification"])
        notifications.handle(host.request(DeviceTopic.notificationPostRequest, NotificationRequest(id: "n1", title: "Walk", body: "Time to walk"),
                                          from: "app", corr: "app-1"))
        XCTAssertTrue(try host.reply("app-1", as: NoValue.self).ok)
        notifications.tap(id: nil)
        XCTAssertEqual(opened, ["Focus"])
        XCTAssertEqual(host.said, [DeviceTopic.notificationPosted, Topic.reply(to: DeviceTopic.notificationPostRequest), DeviceTopic.notificationTapped])
    }

    func testAnAppTimerFiresAtItsTimeForItsApp() throws {
        let host = try DevicePartHost(folder: folder, start: start)
        let lifecycle = try AppLifecycle(host: host, directory: host.directory)

        lifecycle.handle(host.request(DeviceTopic.timerRequest, AppTimerRequest(id: "unlock-expiry", fireAt: date(start + 60_000)), from: "app", corr: "app-1"))
        XCTAssertTrue(try host.reply("app-1", as: NoValue.self).ok)
        host.inProcessBus.advance(to: start + 59_999)
        XCTAssertTrue(host.inProcessBus.events(DeviceTopic.timerFired).isEmpty)
        host.inProcessBus.advance(to: start + 60_000)
        let fired = try XCTUnwrap(host.inProcessBus.events(DeviceTopic.timerFired).last)
        XCTAssertEqual(try DeviceAPICoding.decode(AppTimerFired.self, from: fired.body).id, "unlock-expiry")
        XCTAssertEqual(fired.time, start + 60_000)
    }

    /// A step's progress and its `scenario.step` body, written directly, are the bytes their `Codable` and `JSONValue`
    /// encodings write: compared as bytes (a String's == takes a composed é for a decomposed one).
    func testAStepsProgressAndItsEventAreWrittenAsTheirEncodingsWrite() {
        for progress in [ScenarioProgress(scenario: "heavy-user", nextStep: 0, time: start),
                         ScenarioProgress(scenario: "a \"quoted\" \\ name\n\t with é, e\u{301}, 🙂, \u{1}, \u{7F}, \u{2028} and /", nextStep: 51_504, time: -1),
                         ScenarioProgress(scenario: "", nextStep: .max, time: .min)] {
            XCTAssertEqual(Array(progress.json), Array(DeviceAPICoding.encode(progress)))
        }
        for (step, line, action) in [(1, 4, "open Instagram"), (51_504, 0, "a \"quoted\" \\ action\n\t with é, e\u{301}, 🙂, \u{1}, \u{7F}, \u{2028} and /"), (Int.max, -1, "")] {
            let written = ScenarioPlayer.stepBody(step: step, line: line, action: action)
            let asJSONValue: JSONValue = ["step": .int(Int64(step)), "line": .int(Int64(line)), "action": .string(action)]
            XCTAssertEqual(Array(written), Array(asJSONValue.jsonText.utf8))
        }
    }
}
