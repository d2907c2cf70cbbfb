import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

/// The facts of the device's durable state that its events state, each by the name the broker keeps it under
/// (`ServiceEvent.fact`): every such event carries the fact's whole value, so the last one journaled is
/// what the journal says of it.
enum StatedFact {
    static let clockOffset = "device.clock-offset"
    static let timeZone = "device.time-zone"
    static let tokenEpoch = "device.token-epoch"
    static func authorization(of product: String) -> String { "familycontrols.authorization.\(product)" }
    static let storePrefix = "managedsettings.store."
    static func store(_ name: String) -> String { storePrefix + name }
    /// The threshold callbacks delivered in an activity's running interval (`DeliveredCrossings`, stated by each one).
    static func crossings(of activity: DeviceActivityName) -> String { "deviceactivity.crossings.\(activity.rawValue)" }
}

/// What the threshold callbacks of an activity have told: the interval they belong to and every crossing delivered in it.
struct DeliveredCrossings: Codable, Equatable {
    var interval: Date
    var crossings: [ThresholdCrossing]
}

/// After a broker was killed between journaling a batch and saving it, the device's state (saved at once in
/// `device.sqlite`) may hold what the resumed journal — cut back to the last save — never says: a shield that
/// went up, a revoked authorization, a clock set, an iOS update. At start, before the scenario goes on, the OS
/// compares each stated fact with what the journal last said of it (kept in `bus.sqlite` with the saved batch)
/// and announces every one that differs, as it would have announced the change. A fact never stated is the
/// fresh device's value, so a run that lost nothing announces nothing and its journal is unchanged. A threshold
/// callback the device marked delivered in a lost batch is unmarked, so that DeviceActivity delivers it again when
/// it resumes (iOS calls it once per interval; the monitor never had it).
struct JournalCatchUp {
    let device: DeviceOS

    /// `zoneToCome`: the zone the device changes to at start (switched on elsewhere), which then announces the zone.
    func announceWhatTheJournalLacks(zoneToCome: TimeZone?) {
        let lastSaid = device.bus.announced
        device.activity.forgetCrossings { activity in said(lastSaid[StatedFact.crossings(of: activity)], as: DeliveredCrossings.self) }
        let clock = device.clock!
        if said(lastSaid[StatedFact.clockOffset], as: ClockOffset.self)?.offsetMs ?? 0 != clock.offsetMilliseconds { device.announceClockOffset() }
        if zoneToCome == nil, said(lastSaid[StatedFact.timeZone], as: ZoneSetting.self)?.timeZone ?? device.settings.timeZone.identifier != clock.timeZone.identifier {
            device.announceTimeZone()
        }
        if said(lastSaid[StatedFact.tokenEpoch], as: TokenEpoch.self)?.tokenEpoch ?? 0 != device.tokens.epoch { device.announceTokenEpoch() }
        for product in device.settings.products {
            let status = said(lastSaid[StatedFact.authorization(of: product.name)], as: AuthorizationState.self)?.status ?? .notDetermined
            if status != device.authorization.status(ofProduct: product.name) { device.authorization.announce(product) }
        }
        let settings = device.managedSettings!
        let storesSaid = lastSaid.keys.filter { $0.hasPrefix(StatedFact.storePrefix) }.map { String($0.dropFirst(StatedFact.storePrefix.count)) }
        // Stores the journal last showed in an earlier token epoch carry over as the OS carries them (and as the
        // checker reads them across `device.os-updated`): compared in today's tokens.
        lazy var migration = device.tokens.migrationFromEarlierEpochs(for: device.catalog)
        for store in Set(settings.stores.keys).union(storesSaid).sorted() {
            let held = settings.stores[store] ?? ShieldSettings()
            let last = said(lastSaid[StatedFact.store(store)], as: ManagedSettingsChanged.self)?.shield ?? ShieldSettings()
            guard !(held.isEmpty && last.isEmpty), held != last, held != migration.migrate(last) else { continue }
            settings.announce(held, to: store, writer: settings.lastWriter(of: store))
        }
    }

    /// A stated fact's body, decoded (nil: never stated, or not readable — the fresh device's value then).
    private func said<Body: Decodable>(_ body: [UInt8]?, as type: Body.Type) -> Body? {
        body.flatMap { try? DeviceAPICoding.decode(type, from: $0) }
    }

    private struct ClockOffset: Decodable { var offsetMs: Int64 }
    private struct ZoneSetting: Decodable { var timeZone: String }
    private struct TokenEpoch: Decodable { var tokenEpoch: Int }
}
