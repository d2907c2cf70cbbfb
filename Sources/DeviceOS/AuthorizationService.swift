import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

/// FamilyControls: each app's authorization status and the FamilyActivityPicker.
///
/// The status is asked for by the companion app, answered by the configuration, a scenario step or
/// `shieldbus authorize`, and persisted. Under the policy `ask` the request is answered at once with `notDetermined`
/// while the prompt waits for the person, and the person's answer comes as `familycontrols.authorization.changed`:
/// holding the reply until then would hold the app's turn, and with it virtual time, which the person's answer (a
/// later scenario step) needs to move — a deadlock that only the wall-clock `ack-timeout` would break, at a point
/// set by the processes' timing. Revoking it removes the app's shields and schedules. On a device with
/// several products each app has its own status: its request answers for it alone (the person's answer in a
/// scenario step or `shieldbus authorize`, which names no app, answers for every app).
final class AuthorizationService: AuthorizationStatuses {
    private unowned let host: any DeviceHost
    private let directory: DeviceDirectory
    /// The person revoked the authorization: the apps' shields and schedules are to go.
    private let revoked: () -> Void
    /// Per product (by name), its app's status.
    private var statuses: [String: AuthorizationStatus] = [:]
    /// The picker's answer to each requester, as sent, and the token epoch it was written in: every launch of an app
    /// asks again, and the answer changes only with the tokens (the person's choice is the configuration's).
    private var pickerReplies: [String: (epoch: Int, body: [UInt8])] = [:]
    /// The most requesters whose answers are kept: any client may ask, under any name.
    private static let pickerRepliesKept = 64

    /// The statuses as the device's state holds them; `revoked` is told after a revocation is in force.
    init(host: any DeviceHost, directory: DeviceDirectory, revoked: @escaping () -> Void) throws {
        self.host = host
        self.directory = directory
        self.revoked = revoked
        for product in directory.settings.products {
            statuses[product.name] = try host.state.load(AuthorizationStatus.self, key: key(of: product)) ?? .notDetermined
        }
    }

    /// Where a product's status is kept (one product: the key of a device with one app).
    private func key(of product: DeviceProduct) -> String {
        directory.settings.products.count > 1 ? "authorization.status.\(product.name)" : "authorization.status"
    }

    /// The status of `product`'s app.
    func status(ofProduct product: String) -> AuthorizationStatus { statuses[product] ?? .notDetermined }

    /// The status of `plugin`'s app; for a client of no product (a tool), approved once any app is.
    func status(of plugin: String) -> AuthorizationStatus {
        if let product = directory.product(of: plugin) { return statuses[product.name] ?? .notDetermined }
        return statuses.values.contains(.approved) ? .approved : statuses.values.first ?? .notDetermined
    }

    func handle(_ envelope: Envelope) {
        switch envelope.topic {
        case DeviceTopic.authorizationRequest:
            guard (try? JSONValue(parsing: envelope.body)).flatMap(AuthorizationRequest.init(body:)) != nil
                    || host.decode(AuthorizationRequest.self, from: envelope) != nil else { return }
            guard let product = directory.product(of: envelope.source), statuses[product.name] == .notDetermined else {
                host.reply(to: envelope, .success(AuthorizationState(status: status(of: envelope.source))))
                return
            }
            switch directory.settings.authorization {
            case .approve: setStatus(.approved, of: product)
            case .deny: setStatus(.denied, of: product)
            case .ask: break  // the prompt is up: still notDetermined until the person answers
            }
            host.reply(to: envelope, .success(AuthorizationState(status: status(of: envelope.source))))
        case DeviceTopic.pickerRequest:
            host.reply(to: envelope, bodyJSON: pickerReply(to: envelope.source))
        default:
            break
        }
    }

    /// The person answers the authorization prompt (for every app); each app hears it as
    /// `familycontrols.authorization.changed`.
    func answer(_ newStatus: AuthorizationStatus) {
        if directory.settings.products.allSatisfy({ statuses[$0.name] == newStatus }) {
            host.inputChangedNothing("authorization-unchanged", "Screen Time access is \(newStatus.rawValue) already: the answer changed nothing")
        }
        for product in directory.settings.products { setStatus(newStatus, of: product) }
    }

    /// Authorization revoked in Settings (for every app): their shields and schedules go with it.
    func revoke() {
        for product in directory.settings.products { setStatus(.denied, of: product) }
        revoked()
    }

    private func setStatus(_ newStatus: AuthorizationStatus, of product: DeviceProduct) {
        guard newStatus != statuses[product.name] else { return }
        statuses[product.name] = newStatus
        host.save(newStatus, key: key(of: product))
        announce(product)
    }

    /// `familycontrols.authorization.changed`: `product`'s status in force, to its plugins.
    func announce(_ product: DeviceProduct) {
        host.emit(DeviceTopic.authorizationChanged, AuthorizationState(status: status(ofProduct: product.name)), audience: product.plugins,
                    fact: StatedFact.authorization(of: product.name))
    }

    /// The picker's answer to `requester`, as `DeviceAPICoding` encodes it, written once per token epoch.
    private func pickerReply(to requester: String) -> [UInt8] {
        let epoch = directory.tokens.epoch
        if let kept = pickerReplies[requester], kept.epoch == epoch { return kept.body }
        let body = DeviceAPICoding.encode(DeviceReply.success(PickerResult(selection: pickedSelection(by: requester))))
        if pickerReplies.count >= Self.pickerRepliesKept { pickerReplies.removeAll() }
        pickerReplies[requester] = (epoch, body)
        return body
    }

    /// The tokens for what the person picked in `requester`'s app, in the current token epoch.
    private func pickedSelection(by requester: String) -> FamilyActivitySelection {
        let choice = directory.product(of: requester)?.selection ?? DeviceSettings.PickerChoice()
        var selection = FamilyActivitySelection()
        for name in choice.apps {
            if let app = directory.catalog.app(named: name) { selection.applicationTokens.insert(directory.tokens.application(app.bundleIdentifier)) }
        }
        for id in choice.categories {
            if let category = directory.catalog.category(id: id) { selection.categoryTokens.insert(directory.tokens.category(category.id)) }
        }
        for domain in choice.domains {
            if let known = directory.catalog.domain(domain) { selection.webDomainTokens.insert(directory.tokens.webDomain(known.domain)) }
        }
        return selection
    }
}

/// What the other parts ask of FamilyControls: whether an app may shield and monitor.
protocol AuthorizationStatuses: AnyObject {
    /// The status of `product`'s app.
    func status(ofProduct product: String) -> AuthorizationStatus
    /// The status of `plugin`'s app; for a client of no product (a tool), approved once any app is.
    func status(of plugin: String) -> AuthorizationStatus
}
