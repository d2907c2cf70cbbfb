import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

/// FamilyControls: the app's authorization status and the FamilyActivityPicker.
///
/// The status is asked for by the companion app, answered by the configuration, a scenario step or
/// `shieldbus authorize`, and persisted. Revoking it removes the app's shields and schedules.
final class AuthorizationService {
    private unowned let device: DeviceOS
    private(set) var status: AuthorizationStatus
    /// Requests waiting for the person's answer (policy `ask`).
    private var waiting: [Envelope] = []

    init(device: DeviceOS) throws {
        self.device = device
        status = try device.state.load(AuthorizationStatus.self, key: "authorization.status") ?? .notDetermined
    }

    var isApproved: Bool { status == .approved }

    func handle(_ envelope: Envelope) {
        switch envelope.topic {
        case DeviceTopic.authorizationRequest:
            guard device.decode(AuthorizationRequest.self, from: envelope) != nil else { return }
            if status != .notDetermined {
                device.reply(to: envelope, .success(AuthorizationState(status: status)))
                return
            }
            switch device.settings.authorization {
            case .approve: answer(.approved)
            case .deny: answer(.denied)
            case .ask: break
            }
            if status == .notDetermined { waiting.append(envelope) } else { device.reply(to: envelope, .success(AuthorizationState(status: status))) }
        case DeviceTopic.pickerRequest:
            device.reply(to: envelope, .success(PickerResult(selection: pickedSelection(by: envelope.source))))
        default:
            break
        }
    }

    /// The person answers the authorization prompt.
    func answer(_ newStatus: AuthorizationStatus) {
        setStatus(newStatus)
        let pending = waiting
        waiting = []
        for request in pending { device.reply(to: request, .success(AuthorizationState(status: status))) }
    }

    /// Authorization revoked in Settings: the app's shields and schedules go with it.
    func revoke() {
        setStatus(.denied)
        device.managedSettings.clearAll(reason: "authorization revoked")
        device.activity.stopAll(reason: "authorization revoked")
    }

    private func setStatus(_ newStatus: AuthorizationStatus) {
        guard newStatus != status else { return }
        status = newStatus
        device.save(status, key: "authorization.status")
        device.emit(DeviceTopic.authorizationChanged, AuthorizationState(status: status))
    }

    /// The tokens for what the person picked in `requester`'s app, in the current token epoch.
    private func pickedSelection(by requester: String) -> FamilyActivitySelection {
        let choice = device.product(of: requester)?.selection ?? DeviceSettings.PickerChoice()
        var selection = FamilyActivitySelection()
        for name in choice.apps {
            if let app = device.catalog.app(named: name) { selection.applicationTokens.insert(device.tokens.application(app.bundleIdentifier)) }
        }
        for id in choice.categories {
            if let category = device.catalog.category(id: id) { selection.categoryTokens.insert(device.tokens.category(category.id)) }
        }
        for domain in choice.domains {
            if let known = device.catalog.domain(domain) { selection.webDomainTokens.insert(device.tokens.webDomain(known.domain)) }
        }
        return selection
    }
}
