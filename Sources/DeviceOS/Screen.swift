import BusProtocol
import Configuration
import DeviceAPI
import Foundation
import ScreenTime

/// What is on the device's screen — the home screen, an app, or a browser tab — and the shield over it.
///
/// It enforces ManagedSettings: every app open and web visit is checked against every store; a shielded
/// target never becomes usable; the shield is drawn by the shield renderer (or the system default when the
/// renderer is missing, slow or broken) and its buttons go to the action delegate. Whenever the stores
/// change, what is on screen is checked again.
final class Screen {
    enum Foreground: Equatable {
        case home
        case app(bundleIdentifier: String)
        case web(tab: Int)
    }

    struct Tab: Equatable {
        var url: String
        var host: String
        var isPrivate: Bool
    }

    /// What a shield covers, resolved to the OS's own names and tokens.
    struct Subject: Equatable {
        var app: CatalogApp?
        var host: String?
        var categoryID: String?
    }

    struct PresentedShield {
        var subject: Subject
        var shown: ShieldShown
        /// The product whose extensions draw the shield and answer its buttons.
        var product: DeviceProduct?
    }

    /// Why a subject is shielded, and whose extensions answer for the shield: of the products whose stores
    /// shield it, the first in the configuration (the stores of all of them are named in `match`).
    struct Shielding {
        var match: ShieldMatch
        var product: DeviceProduct
    }

    private struct PendingConfiguration {
        let corr: String
        let subject: Subject
        let shielding: Shielding
    }

    private struct PendingAction {
        let corr: String
        let action: ShieldAction
        let shield: PresentedShield
    }

    /// What the screen tells the rest of the device of what is in use: the meter counts it, the companion apps'
    /// lifecycle follows it, the web limits watch it.
    struct Events {
        /// An app came into use: on screen, with no shield over it.
        var appInUse: (_ app: CatalogApp, _ reason: String) -> Void
        /// A page came into use in a tab.
        var pageInUse: (_ domain: String, _ categoryID: String?, _ isPrivate: Bool) -> Void
        /// What was in use is no longer (it left the screen, or a shield came down over it).
        var useEnded: () -> Void
        /// An app left the screen.
        var appLeft: (_ app: CatalogApp) -> Void
    }

    private unowned let host: any DeviceHost
    private let directory: DeviceDirectory
    private let stores: any ShieldStores
    private let webContent: any WebVerdicts
    private let events: Events
    private(set) var foreground: Foreground = .home
    private(set) var tabs: [Int: Tab] = [:]
    private(set) var presented: PresentedShield?
    private var pendingConfiguration: PendingConfiguration?
    private var pendingAction: PendingAction?
    /// The renderers' replies read lately: a renderer answers the same app's shield with the same bytes.
    private var configurationReplies = RecentlyRead<ShieldConfigurationReply>(limit: 8)

    /// A screen showing the home screen, enforcing `stores` and the OS's own `webContent` settings.
    init(host: any DeviceHost, directory: DeviceDirectory, stores: any ShieldStores, webContent: any WebVerdicts, events: Events) {
        self.host = host
        self.directory = directory
        self.stores = stores
        self.webContent = webContent
        self.events = events
    }

    var isAwaitingReply: Bool { pendingConfiguration != nil || pendingAction != nil }

    /// The subject in the foreground, if any.
    var foregroundSubject: Subject? {
        switch foreground {
        case .home: return nil
        case .app(let bundle):
            guard let app = directory.catalog.app(named: bundle) else { return nil }
            return Subject(app: app, host: nil, categoryID: app.categoryID)
        case .web(let tab):
            guard let page = tabs[tab] else { return nil }
            return Subject(app: nil, host: page.host, categoryID: directory.catalog.domain(page.host)?.categoryID)
        }
    }

    /// What is on screen as `input.look.reply` tells it: the app or page in the foreground (reason `foreground`),
    /// and the shield over it.
    func look(into look: inout DeviceLook) {
        look.shield = presented?.shown
        guard let subject = foregroundSubject else { return }
        let target = target(subject)
        if let application = target.application {
            look.app = AppActivity(application: application, category: target.category, reason: "foreground")
        } else if case .web(let tab) = foreground, let page = tabs[tab], let domain = target.webDomain {
            look.web = WebActivity(webDomain: domain, category: target.category, url: page.url, tab: tab, isPrivate: page.isPrivate, reason: "foreground")
        }
    }

    /// Whether the foreground target is usable: on screen with no shield over it.
    var isUsable: Bool { foreground != .home && presented == nil && pendingConfiguration == nil }

    // MARK: The person's actions

    func open(_ app: CatalogApp, reason: String = "user") {
        if case .app(let current) = foreground, current == app.bundleIdentifier, presented == nil, pendingConfiguration == nil { return }
        leaveForeground(reason: "switch")
        foreground = .app(bundleIdentifier: app.bundleIdentifier)
        show(Subject(app: app, host: nil, categoryID: app.categoryID), reason: reason)
    }

    func close(_ app: CatalogApp?) {
        if let app, foreground != .app(bundleIdentifier: app.bundleIdentifier) {
            host.inputChangedNothing("not-on-screen", "close \(app.name): \(app.name) is not on screen; nothing was closed")
            return
        }
        guard foreground != .home else {
            host.inputChangedNothing("nothing-open", "close: the home screen is showing; nothing was closed")
            return
        }
        goHome(reason: "close")
    }

    func goHome(reason: String = "home") {
        guard foreground != .home else { return }
        leaveForeground(reason: reason)
        foreground = .home
        host.emit(topic: DeviceTopic.home, body: ["reason": .string(reason)])
    }

    func visit(url: String, host: String, tab: Int, isPrivate: Bool) {
        leaveForeground(reason: "switch")
        tabs[tab] = Tab(url: url, host: host, isPrivate: isPrivate)
        foreground = .web(tab: tab)
        show(Subject(app: nil, host: host, categoryID: directory.catalog.domain(host)?.categoryID), reason: "user")
    }

    /// Brings an open tab to the front; its page is shown again (and shielded again if it must be).
    func switchTab(_ tab: Int) {
        guard let page = tabs[tab] else {
            return host.actionDidNothing("no-tab", "switch to tab \(tab): no such tab is open (open tabs: \(tabs.keys.sorted().map(String.init).joined(separator: ", ")))")
        }
        guard foreground != .web(tab: tab) else { return }
        leaveForeground(reason: "switch")
        foreground = .web(tab: tab)
        show(Subject(app: nil, host: page.host, categoryID: directory.catalog.domain(page.host)?.categoryID), reason: "user")
    }

    func closeTab(_ tab: Int) {
        guard tabs[tab] != nil else {
            host.inputChangedNothing("no-tab", "close tab \(tab): no such tab is open (open tabs: \(tabs.keys.sorted().map(String.init).joined(separator: ", ")))")
            return
        }
        if foreground == .web(tab: tab) { goHome(reason: "tab-closed") }
        tabs[tab] = nil
    }

    func press(_ action: ShieldAction) {
        guard let shield = presented else {
            return host.actionDidNothing("no-shield", "a shield button was pressed but no shield is on screen; the press did nothing")
        }
        if action == .secondaryButtonPressed, shield.shown.configuration.secondaryButtonLabel == nil {
            // iOS draws the secondary button only when the configuration labels it: there is nothing to press.
            return host.actionDidNothing("no-secondary-button", "the shield over \(shield.shown.target.displayName) has no secondary button "
                + "(its configuration sets no secondaryButtonLabel, so iOS draws none); the press did nothing")
        }
        guard pendingAction == nil else { return }  // a second press while the first is handled: ignored, like a double tap
        let audience = shield.product?.plugins
        guard host.bus.isConnected(role: .action, among: audience) else {
            // Without a ShieldAction extension iOS closes the app for the primary button and does nothing else.
            respond(action == .primaryButtonPressed ? .close : .none, to: action, on: shield, decidedBy: "system")
            return
        }
        let corr = host.nextCorrelation("action")
        // The tokens as iOS knows them at the press, not as the shield was drawn: an OS update since then regenerated
        // them, and the delegate acts on the token it is handed (Tether: the injected token stays valid; a stale
        // token would lift nothing, and the pressed app would stay shielded).
        let target = target(shield.subject)
        let request = ShieldActionRequest(action: action, entryPoint: shield.shown.entryPoint,
                                          application: target.application?.token, webDomain: target.webDomain?.token,
                                          category: target.category?.token)
        // The delegate's time to answer counts from its turn, not from the press (docs/architecture.md § 5.2).
        host.bus.afterAnswerTime(for: corr, milliseconds: directory.settings.replyTimeoutMilliseconds) { [weak self] in
            guard let self, let pending = pendingAction, pending.corr == corr else { return }
            pendingAction = nil
            respond(.none, to: action, on: pending.shield, decidedBy: "system", note: "the action delegate did not answer within \(directory.settings.replyTimeoutMilliseconds) ms")
        }
        pendingAction = PendingAction(corr: corr, action: action, shield: shield)
        host.emit(DeviceTopic.actionRequest, request, corr: corr, deadline: host.bus.now, audience: audience)
    }

    // MARK: Replies from the renderer and the delegate

    func handleReply(_ envelope: Envelope) {
        if let pending = pendingConfiguration, envelope.corr == pending.corr {
            host.bus.cancelAnswerTime(for: pending.corr)
            pendingConfiguration = nil
            do {
                let reply = try configurationReplies.value(of: envelope.body) { body in
                    try (try? JSONValue(parsing: body)).flatMap(ShieldConfigurationReply.init(body:)) ?? DeviceAPICoding.decode(ShieldConfigurationReply.self, from: body)
                }
                present(pending.subject, pending.shielding, configuration: reply.configuration.withSystemDefaults(), renderedBy: envelope.source)
            } catch {
                present(pending.subject, pending.shielding, configuration: .default, renderedBy: "system",
                        fallbackReason: "renderer-error: \(DeviceAPICoding.describe(error))")
            }
        } else if let pending = pendingAction, envelope.corr == pending.corr {
            host.bus.cancelAnswerTime(for: pending.corr)
            pendingAction = nil
            guard presented != nil else { return }
            do {
                let reply = try DeviceAPICoding.decode(ShieldActionReply.self, from: envelope.body)
                respond(reply.response, to: pending.action, on: pending.shield, decidedBy: envelope.source)
            } catch {
                respond(.none, to: pending.action, on: pending.shield, decidedBy: "system", note: "the action delegate's reply does not decode: \(DeviceAPICoding.describe(error))")
            }
        }
    }

    private func respond(_ response: ShieldActionResponse, to action: ShieldAction, on shield: PresentedShield, decidedBy: String, note: String? = nil) {
        var body: [String: JSONValue] = [
            "action": .string(action.rawValue), "response": .string(response.rawValue),
            "target": .string(shield.shown.target.displayName), "decidedBy": .string(decidedBy),
        ]
        if let note { body["note"] = .string(note) }
        host.emit(topic: DeviceTopic.actionHandled, body: .object(body))
        switch response {
        case .close:
            goHome(reason: "shield-close")
        case .defer:
            // Re-evaluate once everything the delegate set in motion (intents, the monitor's answer) is handled.
            host.bus.whenQuiet { [weak self] in
                guard let self, let current = presented, current.subject == shield.subject else { return }
                recheck(current.subject, reason: "defer")
            }
        case .none:
            break
        }
    }

    // MARK: Enforcement

    /// Checks what is on screen against the stores after anything that can change the answer.
    func reevaluate(reason: String) {
        guard let subject = foregroundSubject else { return }
        if presented != nil || pendingConfiguration != nil {
            if shielding(subject) == nil { recheck(subject, reason: reason) }
        } else if let shielding = shielding(subject) {
            events.useEnded()
            emitLeft(subject, reason: "shielded")
            requestShield(subject, shielding)
        }
    }

    /// Checks a subject that has a shield over it again: lift it, or draw it anew.
    private func recheck(_ subject: Subject, reason: String) {
        if let shielding = shielding(subject) {
            requestShield(subject, shielding)
        } else {
            dismissShield(reason: reason)
            becomeUsable(subject, reason: reason == "defer" ? "defer" : "shield-lifted")
        }
    }

    /// Puts a subject on screen: behind the OS's own web view or a shield if anything refuses it, else usable.
    private func show(_ subject: Subject, reason: String) {
        if presentWebContentView(subject) { return }
        if let shielding = shielding(subject) {
            requestShield(subject, shielding)
        } else {
            becomeUsable(subject, reason: reason)
        }
    }

    /// Whether any product's stores shield `subject` (the stores are merged: any one's shield holds).
    private func shielding(_ subject: Subject) -> Shielding? {
        let matches = directory.settings.products.compactMap { product in match(subject, product).map { Shielding(match: $0, product: product) } }
        guard var first = matches.first else { return nil }
        if matches.count > 1 {
            first.match = ShieldMatch(entryPoint: first.match.entryPoint, stores: matches.flatMap(\.match.stores).sorted())
        }
        return first
    }

    /// Whether `product`'s stores shield `subject`; its own app is exempt from its `.all` category shields, as Apple
    /// exempts the owning app.
    private func match(_ subject: Subject, _ product: DeviceProduct) -> ShieldMatch? {
        let matcher = stores.matcher(for: product)
        let category = subject.categoryID.map(directory.tokens.category)
        if let app = subject.app {
            let owner = product.companionApp.map { directory.tokens.application($0.bundleIdentifier) }
            return matcher.match(application: directory.tokens.application(app.bundleIdentifier), category: category, owner: owner)
        }
        if let host = subject.host {
            let domain = directory.catalog.domain(host)?.domain ?? host
            return matcher.match(webDomain: directory.tokens.webDomain(domain), category: category)
        }
        return nil
    }

    private func target(_ subject: Subject) -> ShieldTarget {
        let category = directory.category(id: subject.categoryID)
        if let app = subject.app { return ShieldTarget(application: directory.application(app), category: category) }
        let domain = directory.catalog.domain(subject.host ?? "")?.domain ?? subject.host ?? ""
        return ShieldTarget(webDomain: WebDomain(token: directory.tokens.webDomain(domain), domain: domain), category: category)
    }

    /// Asks the renderer for the shield's configuration, within the deadline; falls back to the default shield.
    private func requestShield(_ subject: Subject, _ shielding: Shielding) {
        if let pending = pendingConfiguration { host.bus.cancelAnswerTime(for: pending.corr) }
        pendingConfiguration = nil
        let audience = shielding.product.plugins
        guard host.bus.isConnected(role: .shield, among: audience) else {
            present(subject, shielding, configuration: .default, renderedBy: "system", fallbackReason: "no-renderer")
            return
        }
        let corr = host.nextCorrelation("shield")
        let timeout = directory.settings.replyTimeoutMilliseconds
        // The renderer's time to answer counts from its turn: the request may wait behind the turn of the plugin whose
        // write put the shield up (still calling the OS, then its next process starting), which is process timing.
        host.bus.afterAnswerTime(for: corr, milliseconds: timeout) { [weak self] in
            guard let self, let pending = pendingConfiguration, pending.corr == corr else { return }
            pendingConfiguration = nil
            present(pending.subject, pending.shielding, configuration: .default, renderedBy: "system",
                    fallbackReason: "renderer-timeout: no reply within \(timeout) ms")
        }
        pendingConfiguration = PendingConfiguration(corr: corr, subject: subject, shielding: shielding)
        host.emit(DeviceTopic.configurationRequest, bodyJSON: ShieldConfigurationRequest(entryPoint: shielding.match.entryPoint, target: target(subject)).json,
                  corr: corr, deadline: host.bus.now, audience: audience)
    }

    private func present(_ subject: Subject, _ shielding: Shielding, configuration: ShieldConfiguration, renderedBy: String, fallbackReason: String? = nil) {
        present(subject, match: shielding.match, product: shielding.product, configuration: configuration, renderedBy: renderedBy, fallbackReason: fallbackReason)
    }

    private func present(_ subject: Subject, match: ShieldMatch, product: DeviceProduct?, configuration: ShieldConfiguration, renderedBy: String, fallbackReason: String? = nil) {
        guard foregroundSubject == subject else { return }  // the person moved on meanwhile
        var page: (tab: Int, isPrivate: Bool)?
        if subject.app == nil, case .web(let tab) = foreground, let open = tabs[tab] { page = (tab, open.isPrivate) }
        let shown = ShieldShown(target: target(subject), entryPoint: match.entryPoint, stores: match.stores,
                                configuration: configuration, renderedBy: renderedBy, fallbackReason: fallbackReason,
                                tab: page?.tab, isPrivate: page?.isPrivate)
        presented = PresentedShield(subject: subject, shown: shown, product: product)
        host.emit(DeviceTopic.shieldShown, bodyJSON: shown.json)
    }

    private func dismissShield(reason: String) {
        if let pending = pendingConfiguration { host.bus.cancelAnswerTime(for: pending.corr) }
        pendingConfiguration = nil
        if let pending = pendingAction { host.bus.cancelAnswerTime(for: pending.corr) }
        pendingAction = nil
        guard let shield = presented else { return }
        presented = nil
        host.emit(topic: DeviceTopic.shieldDismissed, body: ["target": .string(shield.shown.target.displayName), "reason": .string(reason)])
    }

    private func becomeUsable(_ subject: Subject, reason: String) {
        let target = target(subject)
        if let app = subject.app {
            host.emit(DeviceTopic.appOpened, bodyJSON: AppActivity(application: target.application!, category: target.category, reason: reason).json)
            events.appInUse(app, reason)
        } else if case .web(let tab) = foreground, let page = tabs[tab] {
            // A lifted shield may uncover a page the OS itself refuses (a limit reached meanwhile).
            if presentWebContentView(subject) { return }
            host.emit(DeviceTopic.webVisited, bodyJSON: WebActivity(webDomain: target.webDomain!, category: target.category, url: page.url,
                                                                      tab: tab, isPrivate: page.isPrivate, reason: reason).json)
            events.pageInUse(target.webDomain!.domain!, subject.categoryID, page.isPrivate)
        }
    }

    /// Draws WebKit's "You cannot browse this page" or the tab's "You've reached your limit" over a page the OS's own
    /// settings refuse; no plugin is asked. Returns whether it did.
    private func presentWebContentView(_ subject: Subject) -> Bool {
        guard let host = subject.host, let verdict = webContent.verdict(for: host) else { return false }
        let view = WebContentFilter.view(for: verdict)
        present(subject, match: view.match, product: nil, configuration: view.configuration, renderedBy: "system")
        return true
    }

    /// The page in use may just have reached its domain's web limit: if the OS now refuses it, it leaves use and
    /// the limit view comes down over it (that tab only: another tab stays usable).
    func recheckWebPage() {
        guard isUsable, case .web = foreground, let subject = foregroundSubject, let host = subject.host,
              webContent.verdict(for: host) != nil else { return }
        leaveForeground(reason: "limit-reached")
        _ = presentWebContentView(subject)
    }

    /// The foreground target stops being used (switch, close, home, or a shield comes down over it).
    private func leaveForeground(reason: String) {
        if presented != nil || pendingConfiguration != nil {
            dismissShield(reason: reason)
            return
        }
        guard let subject = foregroundSubject else { return }
        events.useEnded()
        emitLeft(subject, reason: reason)
    }

    private func emitLeft(_ subject: Subject, reason: String) {
        let target = target(subject)
        if let app = subject.app {
            host.emit(DeviceTopic.appClosed, bodyJSON: AppActivity(application: target.application!, category: target.category, reason: reason).json)
            events.appLeft(app)
        } else if case .web(let tab) = foreground, let page = tabs[tab] {
            host.emit(DeviceTopic.webLeft, bodyJSON: WebActivity(webDomain: target.webDomain!, category: target.category, url: page.url,
                                                                   tab: tab, isPrivate: page.isPrivate, reason: reason).json)
        }
    }

    /// After a device restart: back to the home screen, no shield, no tabs.
    func reset() {
        leaveForeground(reason: "restart")
        foreground = .home
        tabs = [:]
    }
}

/// What the screen asks of ManagedSettings: what `product`'s stores shield.
protocol ShieldStores: AnyObject {
    func matcher(for product: DeviceProduct) -> ShieldMatcher
}
