// DeviceOSWarmUp: the first codings of the bodies a day's device OS reads and writes, made once in the broker template
// so that each day forked from it finds them made (docs/architecture.md § 8, "The broker template").
import Broker
import BusProtocol
import Configuration
import DeviceAPI
import Foundation
import SQLite
import ScreenTime

/// The Swift runtime makes, at a body type's first coding in a process, the metadata of its keyed coding containers
/// (`KeyedEncodingContainer<Body.CodingKeys>`, `SortedJSONEncoder`'s and `JSONDecoder`'s own, their boxes), of the
/// generic replies (`DeviceReply<Value>`, its optionals) and of the collections of tokens the bodies hold, and scans
/// the program's conformance records for each requirement. A day's broker would make them at its serving loop's first
/// replies, events and stored values; made in the template, the runtime's caches of them are in every forked day.
///
/// The same goes for what the device stores and reads back when its broker restarts or crashes in a scenario (the
/// activities' registrations, spans of use, delivered notifications), for the shield buttons' request and reply, and for
/// the services' private tables (the monitors by activity, the browser's tabs), whose storage's metadata the runtime
/// makes at their first insertion.
///
/// Safe because only values made here are coded, through the codecs the services use (`DeviceAPICoding`), and tokens
/// issued by an issuer of its own: `run` touches no store, bus, clock, file or setting, nothing is kept, and what
/// stays behind is the runtime's caches of the program's types, the same in every day. (`rememberStores` builds a
/// store at a scratch name and removes it: what stays is its bytes.)
public enum DeviceOSWarmUp {
    /// Codes each body; returns those that did not come back as they went (none: `BrokerTemplateWarmUpTests`), whose
    /// reading would have stopped before the containers it should make. With `catalog`, also issues its tokens and
    /// then a new epoch's (an OS update), as a day's device does at its start and at each update, from an issuer of
    /// its own that it drops: the tables of tokens by kind, and an update's migration, are made once.
    @discardableResult
    public static func run(catalog: AppCatalog? = nil) -> [String] {
        if let catalog {
            let issuer = TokenIssuer(seed: 0, epoch: 0)
            issuer.issueAll(for: catalog)
            _ = issuer.regenerate(for: catalog)
        }
        var failed: [String] = []
        func roundTrip<Body: Codable & Equatable>(_ body: Body) {
            let bytes = DeviceAPICoding.encode(body)
            if (try? DeviceAPICoding.decode(Body.self, from: bytes)) != body { failed.append("\(Body.self)") }
        }
        // A stored body that is not `Equatable` comes back as it went when it codes to the same bytes again.
        func roundTripStored<Body: Codable>(_ body: Body) {
            let bytes = DeviceAPICoding.encode(body)
            if (try? DeviceAPICoding.decode(Body.self, from: bytes)).map(DeviceAPICoding.encode) != bytes { failed.append("\(Body.self)") }
        }
        let app = Token<Application>(rawValue: "warm-up.app")
        let category = Token<ActivityCategory>(rawValue: "warm-up.category")
        let domain = Token<WebDomain>(rawValue: "warm-up.domain")
        let activity = DeviceActivityName(rawValue: "warm-up")
        let event = DeviceActivityEvent.Name(rawValue: "warm-up")
        let date = Date(timeIntervalSince1970: 0)
        let shield = ShieldSettings(applications: [app], applicationCategories: .specific([category], except: [app]),
                                    webDomains: [domain], webDomainCategories: .all(except: [domain]))
        let selection = FamilyActivitySelection(applicationTokens: [app], categoryTokens: [category], webDomainTokens: [domain])
        let schedule = DeviceActivitySchedule(intervalStart: DateComponents(hour: 0, minute: 0), intervalEnd: DateComponents(hour: 23, minute: 59),
                                              repeats: true, warningTime: DateComponents(minute: 5))
        let events = [event: DeviceActivityEvent(applications: [app], categories: [category], webDomains: [domain],
                                                 threshold: DateComponents(minute: 1))]
        let notification = NotificationRequest(id: "warm-up", title: "", body: "", kind: "warm-up")
        let error = DeviceError(code: "warm-up", message: "", plugins: [PluginOutOfAction(name: "warm-up", why: "")])

        // The replies the services write to the OS calls, a value's and an error's.
        roundTrip(DeviceReply.success(AuthorizationState(status: .approved)))
        roundTrip(DeviceReply.success(PickerResult(selection: selection)))
        roundTrip(DeviceReply.success(NoValue()))
        roundTrip(DeviceReply.success(MonitoredActivities(activities: [activity])))
        roundTrip(DeviceReply.success(MonitoredEvents(activity: activity, events: events)))
        roundTrip(DeviceReply.success(ManagedSettingsSnapshot(stores: ["warm-up": shield])))
        roundTrip(DeviceReply<NoValue>.failure(error))
        // The requests the services read and the events they emit.
        roundTrip(ManagedSettingsWrite(store: "warm-up", shield: shield))
        roundTrip(ManagedSettingsChanged(store: "warm-up", shield: shield, writer: "warm-up"))
        roundTrip(StartMonitoring(activity: activity, schedule: schedule, events: events))
        roundTrip(StopMonitoring(activities: [activity]))
        roundTrip(MonitoredSchedule(activity: activity, schedule: schedule, registeredAt: date))
        roundTrip(DeviceActivityCallback(activity: activity, event: event, scheduledFor: date))
        roundTrip(notification)
        roundTrip(AppTimerRequest(id: "warm-up", fireAt: date))
        roundTrip(AppTimerFired(id: "warm-up", scheduledFor: date))
        roundTrip(OpenURL(url: "warm-up://"))
        roundTrip(AppActivity(application: Application(token: app, bundleIdentifier: "warm-up"), category: ActivityCategory(token: category), reason: ""))
        roundTrip(WebActivity(webDomain: WebDomain(token: domain, domain: "warm-up"), category: nil, url: "", tab: 0, isPrivate: false, reason: ""))
        roundTrip(ShieldActionRequest(action: .primaryButtonPressed, entryPoint: .application, application: app, webDomain: domain, category: category))
        roundTrip(ShieldActionReply(response: .close))
        // What they store, and read back when the device restarts.
        let crossing = ThresholdCrossing(event: event, callback: .eventDidReachThreshold, date: date)
        roundTrip(ScenarioProgress(scenario: "warm-up", nextStep: 0, time: 0))
        roundTrip(DeliveredCrossings(interval: date, crossings: [crossing]))
        roundTripStored([DeviceActivityService.Registration(activity: activity, schedule: schedule, events: events, registeredAt: date,
                                                            startedInterval: date, pendingStart: date, product: "warm-up", deliveredCrossings: [crossing])])
        let use = UsageMeter.Use(bundleIdentifier: "warm-up", host: "warm-up", categoryID: "warm-up")
        roundTripStored(UsageMeter.Span(use: use, start: date, end: date))
        roundTripStored(UsageMeter.UseInProgress(use: use, since: date))
        roundTripStored(NotificationCenterService.Delivered(request: notification, poster: "warm-up"))
        // The services' private tables.
        DeviceActivityService.warmUpMonitorTable()
        BrokerWarmUp.reserve([Int: Screen.Tab].self)
        return failed
    }

    /// A fresh device's store (`device.sqlite`), built once at a scratch name in `folder` and removed: each day's is then
    /// written from its bytes (`StoreCreation.remember`), the same file SQLite would build. Thrown when it could not be:
    /// each day then builds its own.
    public static func rememberStores(in folder: String) throws {
        try StoreCreation.remember(pageSize: DeviceStateStore.pageSize, schema: DeviceStateStore.schema, in: folder)
    }
}
