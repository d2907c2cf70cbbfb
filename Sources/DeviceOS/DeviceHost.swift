// DeviceHost and DeviceDirectory: what every part of the device uses of the device as a whole — never another part.

import Broker
import BusProtocol
import Configuration
import DeviceAPI
import Foundation
import ScreenTime

/// What every part of the device uses of the device as a whole: the bus it is attached to, its store, and where
/// it says that a write failed or that the person's action did nothing. `DeviceOS` is the one the product runs; a
/// test builds a part alone on a fake one. The parts never reach each other through it: each is handed the few
/// others it asks (`ShieldStores`, `MeteredUse`, …) and tells what happened through its own events (closures the
/// composition root, `DeviceOS.loadParts`, wires).
protocol DeviceHost: AnyObject {
    /// The bus the device is attached to. The parts use it only once it is: from requests, the person's actions
    /// and timers, never while they are built.
    var bus: any ServiceBus { get }
    var state: DeviceStateStore { get }
    /// A write to the device's state failed (disk full, read-only): said, counted, and held against every tool input
    /// still waiting.
    func storageFailed(_ failure: String)
    /// A fresh correlation id for a request the OS makes.
    func nextCorrelation(_ prefix: String) -> String
    /// The person's action did nothing: said on the bus as an error, and to the tool whose input it was.
    func actionDidNothing(_ code: String, _ message: String)
    /// The person's action changed nothing: only the tool whose input it was is told (nothing is said on the bus).
    /// Returns whether a tool's input was so told (false for a scenario's step).
    @discardableResult
    func inputChangedNothing(_ code: String, _ message: String) -> Bool
}

extension DeviceHost {
    /// Bus time now, as a date.
    var now: Date { DeviceAPI.date(busTime: bus.now) }

    /// Emits an event; with an `audience` (one product's plugins), only they and taps hear it; with a `fact`, the
    /// event states that fact of the device's durable state (`StatedFact`, `JournalCatchUp`).
    func emit<Body: Encodable>(_ topic: String, _ body: Body, corr: String? = nil, deadline: BusTime? = nil, audience: Set<String>? = nil,
                               fact: String? = nil, factValue: [UInt8]? = nil) {
        bus.emit(topic: topic, bodyJSON: DeviceAPICoding.encode(body), corr: corr, deadline: deadline, audience: audience, fact: fact, factValue: factValue)
    }

    /// Emits an event whose body is already encoded (a body written byte by byte: `ShieldShown.json`).
    func emit(_ topic: String, bodyJSON: [UInt8], corr: String? = nil, deadline: BusTime? = nil, audience: Set<String>? = nil,
              fact: String? = nil, factValue: [UInt8]? = nil) {
        bus.emit(topic: topic, bodyJSON: bodyJSON, corr: corr, deadline: deadline, audience: audience, fact: fact, factValue: factValue)
    }

    func emit(topic: String, body: JSONValue, audience: Set<String>? = nil, fact: String? = nil) {
        bus.emit(topic: topic, bodyJSON: body.jsonBytes, audience: audience, fact: fact)
    }

    /// Answers a request event with a reply on its reply topic, carrying its correlation id.
    func reply<Value: Codable & Hashable>(to request: Envelope, _ reply: DeviceReply<Value>) {
        emit(Topic.reply(to: request.topic), reply, corr: request.corr)
    }

    /// Answers a request with a reply body already encoded.
    func reply(to request: Envelope, bodyJSON: [UInt8]) {
        bus.emit(topic: Topic.reply(to: request.topic), bodyJSON: bodyJSON, corr: request.corr, deadline: nil, audience: nil, fact: nil, factValue: nil)
    }

    /// Answers a request that returns nothing: `.success(NoValue())`, its bytes written once (`NoValue.successReplyJSON`).
    func replySuccess(to request: Envelope) {
        reply(to: request, bodyJSON: NoValue.successReplyJSON)
    }

    func fail(_ request: Envelope, code: String, _ message: String) {
        reply(to: request, DeviceReply<NoValue>.failure(DeviceError(code: code, message: message)))
    }

    /// Decodes a request body, answering with a clear error when it does not decode.
    func decode<T: Decodable>(_ type: T.Type, from request: Envelope) -> T? {
        do {
            return try DeviceAPICoding.decode(type, from: request.body)
        } catch {
            fail(request, code: "bad-request", "the body of \(request.topic) from \(request.source) is not a valid \(type): \(DeviceAPICoding.describe(error))")
            return nil
        }
    }

    /// Saves a piece of persistent state. A failure (disk full, read-only) is reported on the terminal, in
    /// `status` and on the bus — never ignored; the value in memory stays in force and the next change saves it.
    func save<T: Encodable>(_ value: T, key: String) {
        saving(key) { try $0.save(value, key: key) }
    }

    /// Runs a write to the device's state; a failure is handled as `save`'s.
    func saving(_ what: String = "the device state", _ write: (DeviceStateStore) throws -> Void) {
        do {
            try write(state)
        } catch {
            storageFailed("cannot save \(what) in \(state.path): \(error)")
        }
    }
}

/// Who and what is on the device: its settings, its apps and sites, the tokens that name them to the plugins, and
/// which product each plugin belongs to. Every part reads it; only an iOS update changes it (new tokens).
struct DeviceDirectory {
    let settings: DeviceSettings
    let catalog: AppCatalog
    let tokens: TokenIssuer

    /// What the OS tells plugins about an app: token and display name, never the bundle id.
    func application(_ app: CatalogApp) -> Application {
        Application(token: tokens.application(app.bundleIdentifier), localizedDisplayName: app.name)
    }

    func category(id: String?) -> ActivityCategory? {
        guard let id, let category = catalog.category(id: id) else { return nil }
        return ActivityCategory(token: tokens.category(category.id), localizedDisplayName: category.name)
    }

    /// The one product app on the device (nil with none, or several).
    var onlyCompanionApp: String? {
        let apps = settings.products.compactMap(\.companionApp?.name)
        return apps.count == 1 ? apps[0] : nil
    }

    /// The product `plugin` belongs to (on a device with one product, that product).
    func product(of plugin: String) -> DeviceProduct? { settings.products.first { $0.includes(plugin) } }

    /// The product whose companion app `app` is.
    func product(withCompanion app: CatalogApp) -> DeviceProduct? {
        settings.products.first { $0.companionApp?.bundleIdentifier == app.bundleIdentifier }
    }

    /// Who hears what the OS says to `plugin`'s app: its product's plugins on a device with several products (only
    /// itself if it is none's); nil — every subscriber — on a device with one.
    func audience(of plugin: String) -> Set<String>? {
        guard settings.products.count > 1 else { return nil }
        return product(of: plugin)?.plugins ?? [plugin]
    }
}

/// The device's one seeded source of chance (the far-schedule quirk's rolls): kept by the device across reloads of
/// its parts, so a restart does not replay the same rolls.
final class DeviceRandom {
    var generator: SeededRandom

    init(seed: UInt64) { generator = SeededRandom(seed: seed) }
}
