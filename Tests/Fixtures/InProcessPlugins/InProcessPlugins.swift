// InProcessPlugins: a small product's app, shield and action delegate, run as processes (`fixture-in-process`) and
// hosted on a test's threads (`InProcessPlugin`), so that a test can compare the journals of the two.

import Foundation
import ShieldBusSDK

/// The fixture's components by principal class.
public enum InProcessPlugins {
    public static let principalClasses: KeyValuePairs<String, @Sendable () -> BusComponent> = [
        "SettingUpApp": { SettingUpApp() },
        "NamingShield": { NamingShield() },
        "ClosingAction": { ClosingAction() },
        "HoldingApp": { HoldingApp() },
    ]

    /// The fixture's program: the component its launch's principal class names.
    public static let program = PluginProgram.principalClasses(principalClasses)

    /// The component of principal class `name`, if the fixture has one.
    public static func component(named name: String) -> (@Sendable () -> BusComponent)? {
        principalClasses.first { $0.key == name }?.value
    }
}

/// The companion app: when told `app.setup.begin` (in its turn), it asks for authorization, then shields every app
/// but itself, and says how both went and whose runtime it used.
final class SettingUpApp: BusPlugin {
    override var role: Role { .app }
    override var subscriptions: [String] { ["app.setup."] }

    override func handle(_ envelope: Envelope) {
        guard envelope.topic == "app.setup.begin", let runtime = PluginRuntime.current else { return }
        func succeeded(_ topic: String, _ body: [UInt8]) -> Bool {
            (try? runtime.callRaw(topic, body: body))?.bodyValue["ok"]?.boolValue ?? false
        }
        let authorized = succeeded(DeviceTopic.authorizationRequest, DeviceAPICoding.encode(AuthorizationRequest(member: .individual)))
        let everything = ManagedSettingsWrite(store: "focus", shield: ShieldSettings(applicationCategories: .all()))
        let shielded = succeeded(DeviceTopic.settingsWriteRequest, DeviceAPICoding.encode(everything))
        try? runtime.publish("app.setup.done", json: ["runtime": .string(runtime.name), "authorized": .bool(authorized), "shielded": .bool(shielded)])
    }
}

/// The shield configuration: its title names the runtime that drew it and the time its `Date()` read.
final class NamingShield: BusPlugin {
    override var role: Role { .shield }
    override var subscriptions: [String] { ["shield.configuration."] }

    override func handle(_ envelope: Envelope) {
        guard envelope.topic == DeviceTopic.configurationRequest, let runtime = PluginRuntime.current else { return }
        let read = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let configuration = ShieldConfiguration(title: .init(text: "\(runtime.name) at \(read)", color: .black))
        try? runtime.reply(to: envelope, body: DeviceAPICoding.encode(ShieldConfigurationReply(configuration: configuration)))
    }
}

/// The action delegate: closes the app when the runtime it finds is its own, else leaves the shield as it is.
final class ClosingAction: BusPlugin {
    override var role: Role { .action }
    override var subscriptions: [String] { ["shield.action."] }

    override func handle(_ envelope: Envelope) {
        guard envelope.topic == DeviceTopic.actionRequest, let runtime = PluginRuntime.current else { return }
        let response: ShieldActionResponse = runtime.name == "action" ? .close : .none
        try? runtime.reply(to: envelope, body: DeviceAPICoding.encode(ShieldActionReply(response: response)))
    }
}

/// An app that, told `app.hold.begin`, keeps the event in hand until the test lets it go (`HoldingGate`): a test can
/// kill a hosted plugin in the middle of a handling in which no call fails.
final class HoldingApp: BusPlugin {
    override var role: Role { .app }
    override var subscriptions: [String] { ["app.hold."] }

    override func handle(_ envelope: Envelope) {
        guard envelope.topic == "app.hold.begin" else { return }
        HoldingGate.entered.signal()
        _ = HoldingGate.release.wait(timeout: .now() + 30)
    }
}

/// Where a test meets `HoldingApp`'s handling.
public enum HoldingGate {
    /// Signalled when the app has `app.hold.begin` in hand.
    public static let entered = DispatchSemaphore(value: 0)
    /// Signalled by the test to let that handling end.
    public static let release = DispatchSemaphore(value: 0)
}
