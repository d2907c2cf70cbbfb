import BusProtocol
import DeviceAPI
@testable import DeviceOS
import ScreenTime
import ShieldBusTestSupport
import XCTest

/// The device OS on a bus the test holds (`InProcessBus`): no broker, no plugin process. The test plays the app, the
/// shield renderer, the action delegate and the person, and reads what the OS said in the order it said it.
final class InProcessDayTests: XCTestCase {
    private let folder = TemporaryDirectory(prefix: "sb-inprocess")
    private let start: BusTime = 1_767_261_600_000  // 10:00 UTC

    private func makeDevice(on bus: InProcessBus, fidelity: Fidelity? = nil, state: String = "device.sqlite") throws -> DeviceOS {
        let catalog = try FocusDevice.catalog()
        var settings = FocusDevice.settings(catalog: catalog, companionPlugin: "app")
        if let fidelity { settings.fidelity = fidelity }
        let device = try DeviceOS(settings: settings, catalog: catalog, statePath: folder.file(state))
        bus.connect("app", role: .app, subscriptions: ["app.", "managedsettings."])
        bus.connect("shield", role: .shield, subscriptions: ["shield.configuration."])
        bus.connect("action", role: .action, subscriptions: ["shield.action."])
        bus.attach(device)
        bus.becomeReady()
        return device
    }

    /// The reply to the request `corr` asked, decoded.
    private func reply<Value: Codable & Hashable>(_ corr: String, on bus: InProcessBus, as value: Value.Type) throws -> DeviceReply<Value> {
        let envelope = try XCTUnwrap(bus.journal.last { $0.corr == corr && $0.isReply }, "no reply to \(corr)")
        return try DeviceAPICoding.decode(DeviceReply<Value>.self, from: envelope.body)
    }

    /// The topics the OS said after the event numbered `seq`, in order (the plugins' and the person's left out).
    private func said(after seq: UInt64, on bus: InProcessBus) -> [String] {
        bus.journal.filter { $0.seq > seq && $0.source == "broker" }.map(\.topic)
    }

    func testAShieldedAppIsDrawnByTheRendererAndLiftedWhenTheAppUnlocksIt() throws {
        let bus = InProcessBus(start: start)
        let device = try makeDevice(on: bus)
        let instagram = device.tokens.application("com.burbn.instagram")

        // The app is authorized and shields Instagram in its store.
        bus.publish(DeviceTopic.authorizationRequest, AuthorizationRequest(member: .individual), from: "app", corr: "app-1")
        XCTAssertEqual(try reply("app-1", on: bus, as: AuthorizationState.self).value?.status, .approved)
        bus.publish(DeviceTopic.settingsWriteRequest, ManagedSettingsWrite(store: "focus", shield: ShieldSettings(applications: [instagram])),
                    from: "app", corr: "app-2")
        XCTAssertTrue(try reply("app-2", on: bus, as: NoValue.self).ok)
        XCTAssertEqual(bus.events(DeviceTopic.settingsChanged).count, 1)

        // The person opens Instagram: the OS asks the renderer, and draws what it answers.
        let opened = UInt64(bus.journal.count)
        bus.publish("input.open.request", ["app": "Instagram"], from: "person", corr: "do-1")
        let request = try XCTUnwrap(bus.events(DeviceTopic.configurationRequest).last)
        XCTAssertEqual(said(after: opened, on: bus), [DeviceTopic.scenarioStep, DeviceTopic.configurationRequest],
                       "nothing is usable, or shown, before the renderer answers")
        let configuration = ShieldConfiguration(title: .init(text: "Not now", color: .black))
        bus.publish(DeviceTopic.configurationReply, ShieldConfigurationReply(configuration: configuration), from: "shield", corr: request.corr)
        let shown = try DeviceAPICoding.decode(ShieldShown.self, from: try XCTUnwrap(bus.events(DeviceTopic.shieldShown).last).body)
        XCTAssertEqual(shown.renderedBy, "shield")
        XCTAssertEqual(shown.configuration.title?.text, "Not now")
        XCTAssertEqual(shown.stores, ["focus"])
        bus.settle()
        let outcome = try XCTUnwrap(try reply("do-1", on: bus, as: InputOutcome.self).value)
        XCTAssertTrue(outcome.handled)
        XCTAssertEqual(outcome.screen?.shield?.renderedBy, "shield", "the person's tool hears the shield is up")
        XCTAssertTrue(bus.events(DeviceTopic.appOpened).isEmpty, "a shielded app is never in use")

        // The person presses the primary button: the delegate defers, and the app lifts its store's shield.
        let pressed = UInt64(bus.journal.count)
        bus.advance(to: start + 60_000)
        bus.publish("input.press.request", ["button": "primary"], from: "person", corr: "do-2")
        let action = try XCTUnwrap(bus.events(DeviceTopic.actionRequest).last)
        XCTAssertEqual(try DeviceAPICoding.decode(ShieldActionRequest.self, from: action.body).application, instagram)
        bus.publish(DeviceTopic.actionReply, ShieldActionReply(response: .defer), from: "action", corr: action.corr)
        bus.publish(DeviceTopic.settingsWriteRequest, ManagedSettingsWrite(store: "focus", shield: ShieldSettings()), from: "app", corr: "app-3")
        bus.settle()
        XCTAssertEqual(said(after: pressed, on: bus), [
            DeviceTopic.scenarioStep, DeviceTopic.actionRequest, DeviceTopic.actionHandled, DeviceTopic.settingsChanged,
            DeviceTopic.shieldDismissed, DeviceTopic.appOpened, DeviceTopic.settingsWriteReply, "input.press.reply",
        ])
        let use = try DeviceAPICoding.decode(AppActivity.self, from: try XCTUnwrap(bus.events(DeviceTopic.appOpened).last).body)
        XCTAssertEqual(use.application.token, instagram)
        XCTAssertEqual(use.reason, "shield-lifted")
        XCTAssertEqual(bus.journal.last { $0.topic == DeviceTopic.appOpened }?.time, start + 60_000, "stamped with the bus clock the test moved")
        XCTAssertTrue(try reply("do-2", on: bus, as: InputOutcome.self).ok)
        XCTAssertTrue(bus.storageFailures.isEmpty, bus.storageFailures.joined(separator: "; "))
    }

    /// The callbacks the OS delivered for `activity`, as (topic, bus time) in order.
    private func callbacks(of activity: String, on bus: InProcessBus) -> [(String, BusTime)] {
        bus.journal.filter { $0.topic.hasPrefix("deviceactivity.") && $0.source == "broker" && $0.bodyValue["activity"]?.stringValue == activity }
            .map { (String($0.topic.dropFirst("deviceactivity.".count)), $0.time) }
    }

    /// A zone change mid-interval, as iOS does it (Apple: "the system uses the time zone of the device at
    /// `nextInterval.start` to calculate device activity for the entirety of the interval"; the end is read "on
    /// wall-clock time, regardless of any time zone changes"): the running interval goes on — no end, no start — its count
    /// from its own start, its end at the first 04:00 the new zone's clock shows after it began. Read in the new zone
    /// from the change, the window would have started an hour earlier and counted the 50 minutes of use before it: the
    /// threshold would have come at the change. A schedule whose components name a zone stays in that zone; a zone
    /// whose clock is already past the interval's end ends it at once.
    func testAZoneChangeMidIntervalContinuesItsCountAndReadsItsEndInTheNewZone() throws {
        let one: BusTime = 1_767_229_200_000  // 01:00 UTC on 1 January 2026
        func at(_ minutes: Int) -> BusTime { one + BusTime(minutes) * 60_000 }
        let bus = InProcessBus(start: one)
        let device = try makeDevice(on: bus)
        let instagram = device.tokens.application("com.burbn.instagram")
        bus.publish(DeviceTopic.authorizationRequest, AuthorizationRequest(member: .individual), from: "app", corr: "app-1")
        XCTAssertEqual(try reply("app-1", on: bus, as: AuthorizationState.self).value?.status, .approved)
        let window = DeviceActivitySchedule(intervalStart: DateComponents(hour: 2), intervalEnd: DateComponents(hour: 4), repeats: true)
        let limit = DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 30))
        bus.publish(DeviceTopic.startMonitoringRequest, StartMonitoring(activity: DeviceActivityName("window"), schedule: window, events: [DeviceActivityEvent.Name("limit"): limit]),
                    from: "app", corr: "app-2")
        XCTAssertTrue(try reply("app-2", on: bus, as: NoValue.self).ok)
        let utc = TimeZone(identifier: "UTC")!
        var start = DateComponents(hour: 2), end = DateComponents(hour: 4)
        start.timeZone = utc
        end.timeZone = utc
        bus.publish(DeviceTopic.startMonitoringRequest, StartMonitoring(activity: DeviceActivityName("pinned"),
                                                                        schedule: DeviceActivitySchedule(intervalStart: start, intervalEnd: end, repeats: true)),
                    from: "app", corr: "app-3")
        XCTAssertTrue(try reply("app-3", on: bus, as: NoValue.self).ok)

        // 50 minutes of Instagram before the window, 10 in it; then the device goes to Lagos (UTC+1): 03:10 there.
        bus.publish("input.open.request", ["app": "Instagram"], from: "person", corr: "do-1")
        bus.settle()
        bus.advance(to: at(50))
        bus.publish("input.home.request", [String: String](), from: "person", corr: "do-2")
        bus.settle()
        bus.advance(to: at(60))
        bus.publish("input.open.request", ["app": "Instagram"], from: "person", corr: "do-3")
        bus.settle()
        bus.advance(to: at(70))
        device.setTimeZone("Africa/Lagos")
        bus.settle()
        XCTAssertEqual(bus.events(DeviceTopic.timeZoneChanged).map(\.time), [at(70)])
        bus.advance(to: at(3 * 60 + 10))
        bus.publish("input.home.request", [String: String](), from: "person", corr: "do-4")
        bus.settle()

        XCTAssertEqual(callbacks(of: "window", on: bus).map(\.0), ["interval-did-start", "event-did-reach-threshold", "interval-did-end"])
        XCTAssertEqual(callbacks(of: "window", on: bus).map(\.1), [at(60), at(90), at(120)],
                       "30 minutes counted from 02:00 UTC, the 10 before the change included; the end at 04:00 in Lagos, 03:00 UTC")
        XCTAssertEqual(callbacks(of: "pinned", on: bus).map(\.0), ["interval-did-start", "interval-did-end"])
        XCTAssertEqual(callbacks(of: "pinned", on: bus).map(\.1), [at(60), at(180)], "02:00–04:00 UTC, whatever the device's zone")

        // The next window is Lagos's: from 02:00 there, 01:00 UTC. A change at 02:30 UTC to Athens (UTC+2: 04:30 there)
        // finds its clock past 04:00 since the window began (03:00 there): it ends at once.
        bus.advance(to: at(24 * 60 + 90))
        device.setTimeZone("Europe/Athens")
        bus.settle()
        XCTAssertEqual(callbacks(of: "window", on: bus).dropFirst(3).map(\.0), ["interval-did-start", "interval-did-end"])
        XCTAssertEqual(callbacks(of: "window", on: bus).dropFirst(3).map(\.1), [at(24 * 60), at(24 * 60 + 90)])
        XCTAssertTrue(bus.storageFailures.isEmpty, bus.storageFailures.joined(separator: "; "))
    }

    /// Under `whole-minute-callbacks`, a threshold reached at 22:30:20 waits for 22:31. A zone change at 22:30:40 to
    /// Tokyo shows a later date (07:30 on the 2nd), but the 22:00–08:00 interval goes on (its end read in Tokyo: 08:00
    /// there, 23:00 UTC): the callback is still that interval's, and goes out at its minute. Only a change that ends
    /// the interval drops it, as a clock set to a later date does: in Darwin the interval began at 07:30, and its 08:00
    /// has passed.
    func testACallbackHeldForItsMinuteOutlivesAZoneChangeToALaterDateThatContinuesItsInterval() throws {
        let ten: BusTime = 1_767_304_800_000  // 22:00 UTC on 1 January 2026
        func at(_ seconds: Int) -> BusTime { ten + BusTime(seconds) * 1_000 }
        let fidelity = Fidelity(profile: .faithful, overrides: [.wholeMinuteCallbacks: true])
        for (zone, goesOn) in [("Asia/Tokyo", true), ("Australia/Darwin", false)] {
            let bus = InProcessBus(start: ten)
            let device = try makeDevice(on: bus, fidelity: fidelity, state: "\(zone.replacingOccurrences(of: "/", with: "-")).sqlite")
            let instagram = device.tokens.application("com.burbn.instagram")
            bus.publish(DeviceTopic.authorizationRequest, AuthorizationRequest(member: .individual), from: "app", corr: "app-1")
            XCTAssertEqual(try reply("app-1", on: bus, as: AuthorizationState.self).value?.status, .approved)
            let night = DeviceActivitySchedule(intervalStart: DateComponents(hour: 22), intervalEnd: DateComponents(hour: 8), repeats: true)
            bus.publish(DeviceTopic.startMonitoringRequest,
                        StartMonitoring(activity: DeviceActivityName("night"), schedule: night,
                                        events: [DeviceActivityEvent.Name("limit"): DeviceActivityEvent(applications: [instagram], threshold: DateComponents(minute: 30))]),
                        from: "app", corr: "app-2")
            XCTAssertTrue(try reply("app-2", on: bus, as: NoValue.self).ok)
            bus.advance(to: at(20))
            bus.publish("input.open.request", ["app": "Instagram"], from: "person", corr: "do-1")
            bus.settle()
            bus.advance(to: at(30 * 60 + 40))
            device.setTimeZone(zone)  // Tokyo: 07:30:40 on 2 January; Darwin (UTC+9:30): 08:00:40, past the 08:00 since 07:30
            bus.settle()
            bus.advance(to: at(40 * 60))
            bus.publish("input.home.request", [String: String](), from: "person", corr: "do-2")
            bus.settle()

            let thresholds = callbacks(of: "night", on: bus).filter { $0.0 == "event-did-reach-threshold" }.map(\.1)
            if goesOn {
                XCTAssertEqual(thresholds, [at(31 * 60)], "\(zone): the interval goes on, and its threshold goes out at its whole minute")
                XCTAssertFalse(callbacks(of: "night", on: bus).contains { $0.0 == "interval-did-end" }, "\(zone): 08:00 there is 23:00 UTC")
            } else {
                XCTAssertEqual(thresholds, [], "\(zone): the change ended the interval, and its held callback with it")
                XCTAssertEqual(callbacks(of: "night", on: bus).filter { $0.0 == "interval-did-end" }.count, 1, "\(zone)")
            }
            XCTAssertTrue(bus.storageFailures.isEmpty, bus.storageFailures.joined(separator: "; "))
        }
    }
}
