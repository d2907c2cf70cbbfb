import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime
import ShieldBusSDK

/// DeviceActivity's monitor extension: override the callbacks you need.
open class DeviceActivityMonitor: BusComponent {
    public init() {}
    /// The extension's host context (`extensionContext`): its `open(_:)` fails, as in these sandboxes on iOS.
    public var extensionContext: NSExtensionContext? { .current }
    public var role: Role { .monitor }
    open var subscriptions: [String] { ["deviceactivity.interval-", "deviceactivity.event-"] }
    /// The App-Group keys whose changes it hears, by group, when it subscribes to `state.changed`: each change it is
    /// handed costs it a turn; nil: every change.
    open var watchedStateKeys: [String: [String]]? { nil }
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
    /// launch of a short-lived monitor reads one, and `JSONDecoder` would spend it in the runtime's conformance scans.
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
