import Configuration
import DeviceAPI
import ScreenTime
import XCTest

/// The bodies written byte by byte (`ShieldShown.json`, `ShieldConfigurationRequest.json`, `ShieldConfigurationReply.json`,
/// `AppActivity.json`, `WebActivity.json`, `InputOutcome.successReplyJSON`, `DeviceActivityCallback.json`,
/// `MonitoredActivities.successReplyJSON`, `NoValue.successReplyJSON`) are the very bytes `DeviceAPICoding.encode` writes for the same value: over values drawn from
/// every case, with and without each optional part, and with strings that need escaping.
final class BodyWritingTests: XCTestCase {
    /// Strings a body may carry: plain, empty, quotes and backslashes, slashes (left unescaped), control characters,
    /// unicode beyond ASCII (accents, CJK, an emoji, a combining mark, the line separators JSON allows raw).
    static let strings = ["Instagram", "", "instagram.com", "say \"hi\"", "back\\slash", "https://example.com/a/b", "tab\there",
                          "line\nbreak", "\r\u{08}\u{0C}", "\u{00}\u{01}\u{1F}\u{7F}", "Café", "e\u{301}", "日本語", "👩‍👩‍👧", "\u{2028}\u{2029}",
                          "symbol:lock.fill", "com.example.App", "tok-AbC_123=="]

    struct Draw: RandomNumberGenerator {
        var random: SeededRandom
        init(state: UInt64) { random = SeededRandom(seed: state) }
        mutating func next() -> UInt64 { random.next() }
        mutating func string() -> String { BodyWritingTests.strings.randomElement(using: &self)! }
        mutating func maybe<T>(_ make: (inout Draw) -> T) -> T? { Bool.random(using: &self) ? make(&self) : nil }
        mutating func color() -> ShieldColor {
            ShieldColor(.random(in: 0...255, using: &self), .random(in: 0...255, using: &self), .random(in: 0...255, using: &self),
                        [0, 15, 16, 255, UInt8.random(in: 0...255, using: &self)].randomElement(using: &self)!)
        }
        mutating func label() -> ShieldConfiguration.Label { ShieldConfiguration.Label(text: string(), color: color()) }
        mutating func target() -> ShieldTarget {
            ShieldTarget(application: maybe { Application(token: $0.maybe { ApplicationToken(rawValue: $0.string()) },
                                                          localizedDisplayName: $0.maybe { $0.string() }, bundleIdentifier: $0.maybe { $0.string() }) },
                         webDomain: maybe { WebDomain(token: $0.maybe { WebDomainToken(rawValue: $0.string()) }, domain: $0.maybe { $0.string() }) },
                         category: maybe { ActivityCategory(token: $0.maybe { ActivityCategoryToken(rawValue: $0.string()) },
                                                            localizedDisplayName: $0.maybe { $0.string() }) })
        }
        mutating func configuration() -> ShieldConfiguration {
            ShieldConfiguration(backgroundBlurStyle: maybe { ShieldBlurStyle.allCases.randomElement(using: &$0)! },
                                backgroundColor: maybe { $0.color() }, icon: maybe { ShieldIcon($0.string()) },
                                title: maybe { $0.label() }, subtitle: maybe { $0.label() }, primaryButtonLabel: maybe { $0.label() },
                                primaryButtonBackgroundColor: maybe { $0.color() }, secondaryButtonLabel: maybe { $0.label() })
        }
    }

    func testShieldShownIsWrittenAsCodableWritesIt() {
        var draw = Draw(state: 1)
        let tabs = [0, 1, -1, 7, 1_000_000, Int.max, Int.min]
        for _ in 0..<5_000 {
            let shown = ShieldShown(target: draw.target(), entryPoint: ShieldEntryPoint.allCases.randomElement(using: &draw)!,
                                    stores: (0..<Int.random(in: 0...3, using: &draw)).map { _ in draw.string() },
                                    configuration: draw.configuration(), renderedBy: draw.string(), fallbackReason: draw.maybe { $0.string() },
                                    tab: draw.maybe { tabs.randomElement(using: &$0)! }, isPrivate: draw.maybe { Bool.random(using: &$0) })
            let expected = DeviceAPICoding.encode(shown)
            XCTAssertEqual(shown.json, expected, String(decoding: expected, as: UTF8.self))
            if shown.json != expected { return }
        }
    }

    func testTheDefaultAndEmptyShieldsAreWrittenAsCodableWritesThem() {
        for configuration in [ShieldConfiguration.default, ShieldConfiguration(), ShieldConfiguration.default.withSystemDefaults()] {
            let shown = ShieldShown(target: ShieldTarget(), entryPoint: .application, stores: [], configuration: configuration, renderedBy: "system")
            XCTAssertEqual(String(decoding: shown.json, as: UTF8.self), String(decoding: DeviceAPICoding.encode(shown), as: UTF8.self))
        }
    }

    func testAShieldConfigurationReplyIsWrittenAsCodableWritesIt() {
        var draw = Draw(state: 5)
        for configuration in [ShieldConfiguration.default, ShieldConfiguration(), ShieldConfiguration.default.withSystemDefaults()] {
            let reply = ShieldConfigurationReply(configuration: configuration)
            XCTAssertEqual(String(decoding: reply.json, as: UTF8.self), String(decoding: DeviceAPICoding.encode(reply), as: UTF8.self))
        }
        for _ in 0..<5_000 {
            let reply = ShieldConfigurationReply(configuration: draw.configuration())
            let expected = DeviceAPICoding.encode(reply)
            XCTAssertEqual(reply.json, expected, String(decoding: expected, as: UTF8.self))
            if reply.json != expected { return }
        }
    }

    func testAShieldConfigurationRequestIsWrittenAsCodableWritesIt() {
        var draw = Draw(state: 2)
        for _ in 0..<5_000 {
            let request = ShieldConfigurationRequest(entryPoint: ShieldEntryPoint.allCases.randomElement(using: &draw)!, target: draw.target())
            let expected = DeviceAPICoding.encode(request)
            XCTAssertEqual(request.json, expected, String(decoding: expected, as: UTF8.self))
            if request.json != expected { return }
        }
    }

    func testAppAndWebActivityAreWrittenAsCodableWritesThem() {
        var draw = Draw(state: 3)
        let tabs = [0, 1, -1, 7, Int.max, Int.min]
        for _ in 0..<5_000 {
            let target = draw.target()
            let application = target.application ?? Application(token: nil)
            let app = AppActivity(application: application, category: target.category, reason: draw.string())
            let expectedApp = DeviceAPICoding.encode(app)
            XCTAssertEqual(app.json, expectedApp, String(decoding: expectedApp, as: UTF8.self))
            let web = WebActivity(webDomain: target.webDomain ?? WebDomain(token: nil), category: target.category, url: draw.string(),
                                  tab: tabs.randomElement(using: &draw)!, isPrivate: Bool.random(using: &draw), reason: draw.string())
            let expectedWeb = DeviceAPICoding.encode(web)
            XCTAssertEqual(web.json, expectedWeb, String(decoding: expectedWeb, as: UTF8.self))
            if app.json != expectedApp || web.json != expectedWeb { return }
        }
    }

    func testAnInputsReplyIsWrittenAsCodableWritesIt() {
        var draw = Draw(state: 6)
        let schedules = [MonitoredSchedule(activity: DeviceActivityName(rawValue: "daily"),
                                           schedule: DeviceActivitySchedule(intervalStart: DateComponents(hour: 6, minute: 30),
                                                                            intervalEnd: DateComponents(hour: 23, minute: 59, second: 59), repeats: true,
                                                                            warningTime: DateComponents(minute: 5)),
                                           registeredAt: Date(timeIntervalSince1970: 1_795_932_000.123_4)),
                         MonitoredSchedule(activity: DeviceActivityName(rawValue: "say \"hi\""),
                                           schedule: DeviceActivitySchedule(intervalStart: DateComponents(hour: 0), intervalEnd: DateComponents(hour: 23), repeats: false),
                                           registeredAt: Date(timeIntervalSince1970: 0))]
        for _ in 0..<3_000 {
            let target = draw.target()
            let look = DeviceLook(
                app: draw.maybe { AppActivity(application: target.application ?? Application(token: nil), category: target.category, reason: $0.string()) },
                web: draw.maybe { WebActivity(webDomain: target.webDomain ?? WebDomain(token: nil), category: target.category, url: $0.string(),
                                              tab: Int.random(in: -1...9, using: &$0), isPrivate: Bool.random(using: &$0), reason: $0.string()) },
                shield: draw.maybe { ShieldShown(target: target, entryPoint: ShieldEntryPoint.allCases.randomElement(using: &$0)!, stores: [$0.string()],
                                                 configuration: $0.configuration(), renderedBy: $0.string(), fallbackReason: $0.maybe { $0.string() }) },
                notifications: (0..<Int.random(in: 0...2, using: &draw)).map { _ in
                    NotificationRequest(id: draw.string(), title: draw.string(), body: draw.string(),
                                        interruptionLevel: NotificationRequest.InterruptionLevel.allCases.randomElement(using: &draw)!, kind: draw.maybe { $0.string() })
                },
                activities: Array(schedules.prefix(Int.random(in: 0...2, using: &draw))))
            for outcome in [InputOutcome(handled: Bool.random(using: &draw), screen: look), InputOutcome(handled: Bool.random(using: &draw), screen: nil)] {
                let expected = DeviceAPICoding.encode(DeviceReply.success(outcome))
                XCTAssertEqual(outcome.successReplyJSON, expected, String(decoding: expected, as: UTF8.self))
                if outcome.successReplyJSON != expected { return }
            }
        }
    }

    func testDeviceActivityCallbacksAreWrittenAsCodableWritesThem() {
        var draw = Draw(state: 5)
        // Whole and fractional milliseconds (rounded as the encoder rounds them), before 1970, and far ahead.
        let seconds: [Double] = [0, 1_790_976_000, 1_790_976_000.0004, 1_790_976_000.0005, 1_790_976_059.9996, -1.5, -86_400.25, 4_102_444_800]
        for _ in 0..<2_000 {
            let callback = DeviceActivityCallback(activity: DeviceActivityName(rawValue: draw.string()),
                                                  event: draw.maybe { DeviceActivityEvent.Name(rawValue: $0.string()) },
                                                  scheduledFor: Date(timeIntervalSince1970: seconds.randomElement(using: &draw)!))
            let expected = DeviceAPICoding.encode(callback)
            XCTAssertEqual(callback.json, expected, String(decoding: expected, as: UTF8.self))
            if callback.json != expected { return }
        }
    }

    func testTheMonitoredActivitiesAndEmptyRepliesAreWrittenAsCodableWritesThem() {
        var draw = Draw(state: 6)
        for _ in 0..<1_000 {
            let activities = MonitoredActivities(activities: (0..<Int.random(in: 0...4, using: &draw)).map { _ in DeviceActivityName(rawValue: draw.string()) })
            let expected = DeviceAPICoding.encode(DeviceReply.success(activities))
            XCTAssertEqual(activities.successReplyJSON, expected, String(decoding: expected, as: UTF8.self))
            if activities.successReplyJSON != expected { return }
        }
        XCTAssertEqual(String(decoding: NoValue.successReplyJSON, as: UTF8.self), String(decoding: DeviceAPICoding.encode(DeviceReply.success(NoValue())), as: UTF8.self))
    }

    /// A field added to one of these types later must be written too: with every optional part present, the keys
    /// written at each level are the type's stored properties, so a property the writers do not know fails here.
    func testEveryStoredPropertyIsWritten() throws {
        var draw = Draw(state: 4)
        func keys(_ json: [UInt8]) throws -> Set<String> {
            Set(try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json)) as? [String: Any]).keys)
        }
        func properties(_ value: Any) -> Set<String> { Set(Mirror(reflecting: value).children.compactMap(\.label)) }
        let label = draw.label()
        let configuration = ShieldConfiguration(backgroundBlurStyle: .dark, backgroundColor: draw.color(), icon: ShieldIcon("leaf.svg"),
                                                title: label, subtitle: label, primaryButtonLabel: label,
                                                primaryButtonBackgroundColor: draw.color(), secondaryButtonLabel: label)
        let application = Application(token: ApplicationToken(rawValue: "a"), localizedDisplayName: "A", bundleIdentifier: "com.a")
        let category = ActivityCategory(token: ActivityCategoryToken(rawValue: "c"), localizedDisplayName: "C")
        let webDomain = WebDomain(token: WebDomainToken(rawValue: "w"), domain: "w.example")
        let target = ShieldTarget(application: application, webDomain: webDomain, category: category)
        let shown = ShieldShown(target: target, entryPoint: .application, stores: ["s"], configuration: configuration, renderedBy: "shield",
                                fallbackReason: "r", tab: 1, isPrivate: true)
        let request = ShieldConfigurationRequest(entryPoint: .application, target: target)
        let app = AppActivity(application: application, category: category, reason: "r")
        let web = WebActivity(webDomain: webDomain, category: category, url: "https://w.example", tab: 1, isPrivate: false, reason: "r")
        XCTAssertEqual(try keys(shown.json), properties(shown))
        XCTAssertEqual(try keys(request.json), properties(request))
        XCTAssertEqual(try keys(app.json), properties(app))
        XCTAssertEqual(try keys(web.json), properties(web))
        let reply = ShieldConfigurationReply(configuration: configuration)
        XCTAssertEqual(try keys(reply.json), properties(reply))
        let look = DeviceLook(app: app, web: web, shield: shown, notifications: [NotificationRequest(id: "n", title: "t", body: "b")],
                              activities: [MonitoredSchedule(activity: DeviceActivityName(rawValue: "daily"),
                                                             schedule: DeviceActivitySchedule(intervalStart: DateComponents(hour: 0), intervalEnd: DateComponents(hour: 23), repeats: true),
                                                             registeredAt: Date(timeIntervalSince1970: 0))])
        let callback = DeviceActivityCallback(activity: DeviceActivityName(rawValue: "daily"), event: DeviceActivityEvent.Name(rawValue: "limit"),
                                              scheduledFor: Date(timeIntervalSince1970: 0))
        XCTAssertEqual(try keys(callback.json), properties(callback))
        let activities = MonitoredActivities(activities: [DeviceActivityName(rawValue: "daily")])
        let activitiesReply = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(activities.successReplyJSON)) as? [String: Any])
        XCTAssertEqual(Set(try XCTUnwrap(activitiesReply["value"] as? [String: Any]).keys), properties(activities))
        let outcome = InputOutcome(handled: true, screen: look)
        let outcomeObject = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(outcome.successReplyJSON)) as? [String: Any])
        let valueObject = try XCTUnwrap(outcomeObject["value"] as? [String: Any])
        XCTAssertEqual(Set(valueObject.keys), properties(outcome))
        XCTAssertEqual(Set(try XCTUnwrap(valueObject["screen"] as? [String: Any]).keys), properties(look))
        let shownObject = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(shown.json)) as? [String: Any])
        let targetObject = try XCTUnwrap(shownObject["target"] as? [String: Any])
        let configurationObject = try XCTUnwrap(shownObject["configuration"] as? [String: Any])
        XCTAssertEqual(Set(targetObject.keys), properties(target))
        XCTAssertEqual(Set(configurationObject.keys), properties(configuration))
        XCTAssertEqual(Set(try XCTUnwrap(configurationObject["title"] as? [String: Any]).keys), properties(label))
        XCTAssertEqual(Set(try XCTUnwrap(targetObject["application"] as? [String: Any]).keys), properties(application))
        XCTAssertEqual(Set(try XCTUnwrap(targetObject["category"] as? [String: Any]).keys), properties(category))
        XCTAssertEqual(Set(try XCTUnwrap(targetObject["webDomain"] as? [String: Any]).keys), properties(webDomain))
    }
}
