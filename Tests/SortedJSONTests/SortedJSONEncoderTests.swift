import DeviceAPI
import Foundation
import ScreenTime
import SortedJSON
import XCTest

/// `SortedJSONEncoder` must write Foundation's bytes: device API bodies are in the journal, compared byte for byte.
final class SortedJSONEncoderTests: XCTestCase {
    /// `JSONEncoder` as `DeviceAPICoding` configured it before `SortedJSONEncoder` (the reference).
    private func foundation(_ dates: SortedJSONEncoder.DateStrategy) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        switch dates {
        case .millisecondsSince1970:
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(Int64((date.timeIntervalSince1970 * 1000).rounded()))
            }
        case .secondsSince1970:
            encoder.dateEncodingStrategy = .secondsSince1970
        }
        return encoder
    }

    private func assertSameBytes<T: Encodable>(_ value: T, dates: SortedJSONEncoder.DateStrategy = .millisecondsSince1970,
                                               file: StaticString = #filePath, line: UInt = #line) throws {
        let expected = String(decoding: try foundation(dates).encode(value), as: UTF8.self)
        let written = String(decoding: try SortedJSONEncoder(dates: dates).encode(value), as: UTF8.self)
        XCTAssertEqual(written, expected, file: file, line: line)
    }

    private let app = Application(token: ApplicationToken(rawValue: "app-7f3a"), localizedDisplayName: "Instagram", bundleIdentifier: "com.burbn.instagram")
    private let category = ActivityCategory(token: ActivityCategoryToken(rawValue: "cat-social"), localizedDisplayName: "Social")

    func testDeviceBodiesAsFoundationWritesThem() throws {
        let configuration = ShieldConfiguration(
            backgroundBlurStyle: .systemThinMaterialDark, backgroundColor: ShieldColor(red: 0.08, green: 0.10, blue: 0.16), icon: "icon.png",
            title: .init(text: "Habits first", color: .white),
            subtitle: .init(text: "Instagram unlocks when today's habits are done (0 of 3).", color: ShieldColor(white: 0.75)),
            primaryButtonLabel: .init(text: "Close", color: .white), primaryButtonBackgroundColor: ShieldColor(red: 0.2, green: 0.55, blue: 0.9),
            secondaryButtonLabel: .init(text: "Open for 5 minutes", color: ShieldColor(white: 0.65)))
        let target = ShieldTarget(application: app, category: category)
        try assertSameBytes(ShieldConfigurationRequest(entryPoint: .applicationInCategory, target: target))
        try assertSameBytes(ShieldConfigurationReply(configuration: configuration))
        try assertSameBytes(ShieldShown(target: target, entryPoint: .application, stores: ["habit-lock", "focus"], configuration: configuration,
                                        renderedBy: "shield-renderer", fallbackReason: nil, tab: 3, isPrivate: false))
        try assertSameBytes(ShieldConfigurationReply(configuration: ShieldConfiguration()))
        try assertSameBytes(WebActivity(webDomain: WebDomain(token: WebDomainToken(rawValue: "web-1"), domain: "news.example"), category: nil,
                                        url: "https://news.example/a/b?c=d", tab: 2, isPrivate: true, reason: "user"))
        try assertSameBytes(MonitoredSchedule(activity: DeviceActivityName(rawValue: "daily"),
                                              schedule: DeviceActivitySchedule(intervalStart: DateComponents(hour: 6, minute: 30),
                                                                               intervalEnd: DateComponents(hour: 23, minute: 59, second: 59), repeats: true,
                                                                               warningTime: DateComponents(minute: 5)),
                                              registeredAt: Date(timeIntervalSince1970: 1_795_932_000.123_4)))
        try assertSameBytes(StartMonitoring(activity: DeviceActivityName(rawValue: "limits"),
                                            schedule: DeviceActivitySchedule(intervalStart: DateComponents(hour: 0), intervalEnd: DateComponents(hour: 23), repeats: false),
                                            events: [DeviceActivityEvent.Name(rawValue: "ten"): DeviceActivityEvent(applications: [app.token!], threshold: DateComponents(minute: 10)),
                                                     DeviceActivityEvent.Name(rawValue: "Two"): DeviceActivityEvent(categories: [category.token!], threshold: DateComponents(hour: 2), includesPastActivity: true)]))
        try assertSameBytes(ManagedSettingsSnapshot(stores: ["habit-lock": ShieldSettings(applications: [app.token!], applicationCategories: ShieldSettings.ActivityCategoryPolicy<Application>.specific([category.token!])),
                                                             "empty": ShieldSettings()]))
        try assertSameBytes(DeviceReply<NoValue>.failure(DeviceError(code: "bad-request", message: "the body is not a \"StartMonitoring\": at 'a/b'\n")))
        try assertSameBytes(DeviceReply.success(AppTimerFired(id: "t-1", scheduledFor: Date(timeIntervalSince1970: -12.5))))
        try assertSameBytes(NotificationRequest(id: "n", title: "Tab\there", body: "ünïcødé 🙂 \u{2028}", interruptionLevel: .timeSensitive, kind: nil))
    }

    func testEscapesAndNumbersAsFoundationWritesThem() throws {
        let controls = String(decoding: (0..<0x20).map { UInt8($0) } + Array("\"\\/ \u{7F}".utf8), as: UTF8.self)
        try assertSameBytes(["text": controls])
        try assertSameBytes([0.1, 1e20, 1e-7, -0.0, 123_456_789.0, 1.5, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude, 9_007_199_254_740_993])
        try assertSameBytes([Float(0.1), Float(3)])
        try assertSameBytes([Int64.min, Int64.max, 0])
        try assertSameBytes([UInt64.max])
        try assertSameBytes([10: "ten", 2: "two", -1: "minus one"])
        try assertSameBytes(["b": ["z": [1, 2], "a": []], "a10": [:], "a2": ["x": nil, "y": [3]], "B": [:], "é": [:], "_": [:]] as [String: [String: [Int]?]])
        try assertSameBytes([Date(timeIntervalSince1970: 1_795_932_000.5), Date(timeIntervalSince1970: 0.000_5)])
        try assertSameBytes(["at": Date(timeIntervalSince1970: 1_795_932_000.25)], dates: .secondsSince1970)
        try assertSameBytes(["url": URL(string: "https://example.com/a b".addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!)!])
        try assertSameBytes(["data": Data([0, 1, 2, 250, 255])])
        try assertSameBytes(Decimal(string: "12.50"))
        try assertSameBytes("top-level string")
        try assertSameBytes(Optional<Int>.none)
    }

    /// Hand-written `encode(to:)`s: a key written twice, nested containers, a value that writes nothing, a superclass.
    func testUnusualEncodingsAsFoundationWritesThem() throws {
        try assertSameBytes(Unusual())
        try assertSameBytes([Unusual(), Unusual()])
        try assertSameBytes(Child())
        try assertSameBytes(ManyKeys())
        try assertSameBytes(Dictionary(uniqueKeysWithValues: (0..<40).map { ("key\($0)", $0) }))
    }

    func testATopLevelValueThatEncodesNothingIsAnErrorAsInFoundation() {
        XCTAssertThrowsError(try SortedJSONEncoder(dates: .millisecondsSince1970).encode(Nothing()))
        XCTAssertThrowsError(try foundation(.millisecondsSince1970).encode(Nothing()))
    }

    func testNonFiniteDoublesAreErrorsAsInFoundation() {
        XCTAssertThrowsError(try SortedJSONEncoder(dates: .millisecondsSince1970).encode([Double.nan]))
        XCTAssertThrowsError(try foundation(.millisecondsSince1970).encode([Double.nan]))
        XCTAssertThrowsError(try SortedJSONEncoder(dates: .millisecondsSince1970).encode(["x": Double.infinity]))
    }
}

private struct Nothing: Encodable {
    func encode(to encoder: Encoder) throws {}
}

private struct Unusual: Encodable {
    enum Keys: String, CodingKey { case twice, nested, list, nothing, single }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode("first", forKey: .twice)
        try container.encode(2, forKey: .twice)
        var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .nested)
        try nested.encode(true, forKey: .single)
        var list = container.nestedUnkeyedContainer(forKey: .list)
        try list.encode("a")
        var inner = list.nestedUnkeyedContainer()
        try inner.encodeNil()
        var object = list.nestedContainer(keyedBy: Keys.self)
        try object.encode(1.25, forKey: .single)
        try container.encode(Nothing(), forKey: .nothing)
    }
}

/// More keys than an object searches one by one, one of them encoded twice.
private struct ManyKeys: Encodable {
    struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for index in 0..<30 { try container.encode(index, forKey: Key(stringValue: "k\(index)")) }
        try container.encode("again", forKey: Key(stringValue: "k3"))
        try container.encode("late", forKey: Key(stringValue: "k29"))
    }
}

private class Parent: Encodable {
    var inherited = "parent"
}

private final class Child: Parent {
    enum Keys: String, CodingKey { case own }

    override func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode("child", forKey: .own)
        try super.encode(to: container.superEncoder())
    }
}
