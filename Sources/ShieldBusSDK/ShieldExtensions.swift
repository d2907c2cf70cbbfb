import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

/// The shield's appearance (ManagedSettingsUI's `ShieldConfigurationDataSource`): override the entry points
/// you need; each returns the system default unless overridden.
open class ShieldConfigurationDataSource: BusComponent {
    public init() {}
    public var role: Role { .shield }
    open var subscriptions: [String] { [DeviceTopic.configurationRequest] }
    open func didStart() {}

    /// An app shielded by its own token.
    open func configuration(shielding application: Application) -> ShieldConfiguration { ShieldConfiguration() }
    /// An app shielded because of its category.
    open func configuration(shielding application: Application, in category: ActivityCategory) -> ShieldConfiguration { ShieldConfiguration() }
    /// A web domain shielded by its own token.
    open func configuration(shielding webDomain: WebDomain) -> ShieldConfiguration { ShieldConfiguration() }
    /// A web domain shielded because of its category.
    open func configuration(shielding webDomain: WebDomain, in category: ActivityCategory) -> ShieldConfiguration { ShieldConfiguration() }
    /// Called after the configuration has been sent: work that must not delay the shield the person is waiting for
    /// (a ShieldBus addition; iOS has no such hook). The OS still waits for it before the next turn in virtual time.
    open func didAnswerConfigurationRequest() {}

    public func handle(_ envelope: Envelope) {
        guard envelope.topic == DeviceTopic.configurationRequest, let runtime = PluginRuntime.current else { return }
        do {
            let request = try DeviceAPICoding.decode(ShieldConfigurationRequest.self, from: envelope.body)
            let target = request.target
            let unknownCategory = ActivityCategory(token: nil, localizedDisplayName: nil)
            let configuration: ShieldConfiguration
            switch request.entryPoint {
            case .application: configuration = self.configuration(shielding: target.application ?? Application(token: nil))
            case .applicationInCategory: configuration = self.configuration(shielding: target.application ?? Application(token: nil), in: target.category ?? unknownCategory)
            case .webDomain: configuration = self.configuration(shielding: target.webDomain ?? WebDomain(token: nil))
            case .webDomainInCategory: configuration = self.configuration(shielding: target.webDomain ?? WebDomain(token: nil), in: target.category ?? unknownCategory)
            }
            try runtime.connection.publish(Publish(topic: DeviceTopic.configurationReply,
                                                   body: DeviceAPICoding.encode(ShieldConfigurationReply(configuration: configuration)),
                                                   corr: envelope.corr))
        } catch {
            runtime.logger.error("cannot answer a shield configuration request: \(error)")
        }
        didAnswerConfigurationRequest()
    }
}

/// What shield buttons do (ManagedSettings' `ShieldActionDelegate`): override `handle(action:for:completionHandler:)`.
/// It may record intents in the App-Group store; it never lifts a shield itself (only the stores' owner does).
open class ShieldActionDelegate: BusComponent {
    public init() {}
    public var role: Role { .action }
    open var subscriptions: [String] { [DeviceTopic.actionRequest] }
    open func didStart() {}

    /// A button on an app's shield. The token is the one the system hands over now (valid even after tokens regenerate).
    open func handle(action: ShieldAction, for application: ApplicationToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(.close)
    }
    /// A button on a web domain's shield.
    open func handle(action: ShieldAction, for webDomain: WebDomainToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(.close)
    }
    /// A button on a category's shield.
    open func handle(action: ShieldAction, for category: ActivityCategoryToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(.close)
    }

    public func handle(_ envelope: Envelope) {
        guard envelope.topic == DeviceTopic.actionRequest, let runtime = PluginRuntime.current else { return }
        do {
            let request = try DeviceAPICoding.decode(ShieldActionRequest.self, from: envelope.body)
            var answered = false
            let complete: (ShieldActionResponse) -> Void = { response in
                guard !answered else { return }
                answered = true
                do {
                    try runtime.connection.publish(Publish(topic: DeviceTopic.actionReply, body: DeviceAPICoding.encode(ShieldActionReply(response: response)), corr: envelope.corr))
                } catch {
                    runtime.logger.error("cannot answer a shield action: \(error)")
                }
            }
            if let application = request.application {
                handle(action: request.action, for: application, completionHandler: complete)
            } else if let webDomain = request.webDomain {
                handle(action: request.action, for: webDomain, completionHandler: complete)
            } else if let category = request.category {
                handle(action: request.action, for: category, completionHandler: complete)
            } else {
                complete(.none)
            }
        } catch {
            runtime.logger.error("cannot read a shield action request: \(error)")
        }
    }
}

/// DeviceActivity's monitor extension: override the callbacks you need.
open class DeviceActivityMonitor: BusComponent {
    public init() {}
    public var role: Role { .monitor }
    open var subscriptions: [String] { ["deviceactivity.interval-", "deviceactivity.event-"] }
    open func didStart() {}

    open func intervalDidStart(for activity: DeviceActivityName) {}
    open func intervalDidEnd(for activity: DeviceActivityName) {}
    open func eventDidReachThreshold(_ event: DeviceActivityEvent.Name, activity: DeviceActivityName) {}
    open func intervalWillStartWarning(for activity: DeviceActivityName) {}
    open func intervalWillEndWarning(for activity: DeviceActivityName) {}
    open func eventWillReachThresholdWarning(_ event: DeviceActivityEvent.Name, activity: DeviceActivityName) {}
    /// Any other subscribed event (App-Group changes, custom topics).
    open func handleOther(_ envelope: Envelope) {}

    public func handle(_ envelope: Envelope) {
        guard envelope.topic.hasPrefix("deviceactivity."), let callback = DeviceActivityCallback(body: envelope.bodyValue) else {
            return handleOther(envelope)
        }
        switch envelope.topic {
        case DeviceTopic.intervalDidStart: intervalDidStart(for: callback.activity)
        case DeviceTopic.intervalDidEnd: intervalDidEnd(for: callback.activity)
        case DeviceTopic.intervalWillStartWarning: intervalWillStartWarning(for: callback.activity)
        case DeviceTopic.intervalWillEndWarning: intervalWillEndWarning(for: callback.activity)
        case DeviceTopic.eventDidReachThreshold: if let event = callback.event { eventDidReachThreshold(event, activity: callback.activity) }
        case DeviceTopic.eventWillReachThresholdWarning: if let event = callback.event { eventWillReachThresholdWarning(event, activity: callback.activity) }
        default: handleOther(envelope)
        }
    }
}

extension DeviceActivityCallback {
    /// Reads a callback's body as `JSONDecoder` would decode it (unknown members ignored, `event` optional,
    /// `scheduledFor` in integer milliseconds), nil when it is not one: with BusProtocol's JSON reader, since every
    /// launch of a short-lived monitor reads one, and `JSONDecoder` cost ~0.3 M instructions of its conformance scans.
    init?(body: JSONValue) {
        guard case .string(let activity)? = body["activity"], case .int(let scheduledFor)? = body["scheduledFor"] else { return nil }
        let event: DeviceActivityEvent.Name?
        switch body["event"] {
        case nil, .null?: event = nil
        case .string(let name)?: event = DeviceActivityEvent.Name(rawValue: name)
        default: return nil
        }
        self.init(activity: DeviceActivityName(rawValue: activity), event: event, scheduledFor: DeviceAPI.date(busTime: scheduledFor))
    }
}
