// ManagedSettingsUI, as iOS names it: the shield-configuration extension point. Its `ShieldConfiguration` takes
// UIKit's types (`UIColor`, `UIImage`, `UIBlurEffect.Style`), which this module brings with it (ShieldBusUIKit, which a plugin imports as UIKit).
@_exported import ShieldBusUIKit
import BusProtocol
import ShieldBusSDK
import DeviceAPI
import Foundation
import ScreenTime

/// The shield's appearance (ManagedSettingsUI's `ShieldConfigurationDataSource`): override the entry points
/// you need; each returns the system default unless overridden.
open class ShieldConfigurationDataSource: BusComponent {
    public init() {}
    /// The extension's host context (`extensionContext`): its `open(_:)` fails, as in these sandboxes on iOS.
    public var extensionContext: NSExtensionContext? { .current }
    public var role: Role { .shield }
    open var subscriptions: [String] { [DeviceTopic.configurationRequest] }
    /// The App-Group keys whose changes it hears, by group, when it subscribes to `state.changed`: each change it is
    /// handed costs it a turn; nil: every change.
    open var watchedStateKeys: [String: [String]]? { nil }
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
            let request = try (try? JSONValue(parsing: envelope.body)).flatMap(ShieldConfigurationRequest.init(body:))
                ?? DeviceAPICoding.decode(ShieldConfigurationRequest.self, from: envelope.body)
            let target = request.target
            let unknownCategory = ActivityCategory(token: nil, localizedDisplayName: nil)
            let configuration: ShieldConfiguration
            switch request.entryPoint {
            case .application: configuration = self.configuration(shielding: target.application ?? Application(token: nil))
            case .applicationInCategory: configuration = self.configuration(shielding: target.application ?? Application(token: nil), in: target.category ?? unknownCategory)
            case .webDomain: configuration = self.configuration(shielding: target.webDomain ?? WebDomain(token: nil))
            case .webDomainInCategory: configuration = self.configuration(shielding: target.webDomain ?? WebDomain(token: nil), in: target.category ?? unknownCategory)
            }
            try runtime.reply(to: envelope, body: ShieldConfigurationReply(configuration: configuration).json)
        } catch {
            runtime.logger.error("cannot answer a shield configuration request: \(error)")
        }
        didAnswerConfigurationRequest()
    }
}

