import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime
import ShieldBusSDK

/// What shield buttons do (`ShieldActionDelegate`): override `handle(action:for:completionHandler:)`. It may
/// record intents in the App Group; it never lifts a shield itself (only the stores' owner does).
///
/// As on iOS, the completion handler may be called later — from the main queue (`DispatchQueue.main.async`), a
/// `Task`, any thread — within the OS's deadline; the answer is sent from the plugin's own thread. A handler that
/// never calls it leaves the OS to its default (no action), reported on the bus.
open class ShieldActionDelegate: BusComponent {
    public init() {}
    /// The extension's host context (`extensionContext`): its `open(_:)` fails, as in these sandboxes on iOS.
    public var extensionContext: NSExtensionContext? { .current }
    public var role: Role { .action }
    open var subscriptions: [String] { [DeviceTopic.actionRequest] }
    /// The App-Group keys whose changes it hears, by group, when it subscribes to `state.changed`: each change it is
    /// handed costs it a turn; nil: every change.
    open var watchedStateKeys: [String: [String]]? { nil }
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
            let answer = PendingAnswer<ShieldActionResponse>()
            if let application = request.application {
                handle(action: request.action, for: application, completionHandler: answer.complete)
            } else if let webDomain = request.webDomain {
                handle(action: request.action, for: webDomain, completionHandler: answer.complete)
            } else if let category = request.category {
                handle(action: request.action, for: category, completionHandler: answer.complete)
            } else {
                answer.complete(.none)
            }
            // The OS waits `device.replyTimeoutMs` for the answer, then takes no action (as iOS does).
            let deadline = runtime.settings["replyTimeoutMs"]?.intValue.map(Int.init) ?? runtime.callTimeoutMilliseconds
            guard let response = answer.wait(milliseconds: deadline) else {
                SilentCall.reportFailure("ShieldActionDelegate.handle(action:for:completionHandler:)",
                                         "the completion handler was not called within the OS's \(deadline) ms: the OS took no action")
                answer.whenLate { response in
                    SilentCall.reportFailure("ShieldActionDelegate.handle(action:for:completionHandler:)",
                                             "the completion handler answered .\(response.rawValue) after the OS's \(deadline) ms: too late, ignored")
                }
                return
            }
            try runtime.reply(to: envelope, body: DeviceAPICoding.encode(ShieldActionReply(response: response)))
        } catch {
            runtime.logger.error("cannot answer a shield action: \(error)")
        }
    }
}
