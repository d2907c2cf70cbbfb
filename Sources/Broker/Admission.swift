import BusClient
import BusProtocol

/// Who may say hello as whom (docs/protocol.md § 4.1). A configured plugin's name is only for the process the
/// broker started for it, which proves it with its per-launch credential (a pid proves nothing); its role comes
/// from the configuration and is its alone when the bus's table makes the role exclusive (the OS addresses it).
/// Everyone else is an outside client, admitted by the runtime directory's cookie to the roles the configuration's
/// `clients:` grants — or, as `tool` under any name, by the tool credential, which the person's own tools present
/// and which alone lets a client act as the person (publish `input.*`).
struct Admission {
    let cookie: String
    let toolCredential: String
    let grants: [ClientGrant]
    let table: BusTable
    let runtimeDirectory: RuntimeDirectory

    enum Admitted {
        case supervised(PluginSupervisor.Plugin)
        /// An outside client; `actsForPerson` when it presented the tool credential.
        case outside(actsForPerson: Bool)
    }

    /// The most sessions outside clients may hold at once with one credential (the cookie, the tool credential, an
    /// allowlisted key's): one hostile holder cannot exhaust the broker for the others. Each session may subscribe to
    /// everything, and then costs every event a copy: the limit bounds the copies one credential asks of each event.
    static let sessionsPerCredential = 32
    /// Why `hello` asks for more subscription and observation prefixes than a session may have (`HelloListSize`), if
    /// it does: a session's prefixes are matched against every event, and announced in its `plugin.up`.
    static func subscriptionProblem(_ hello: Hello) -> BusProtocolError? {
        let size = HelloListSize(hello.subscriptions, hello.observations)
        guard !size.isWithinLimits else { return nil }
        return .tooManySubscriptions(count: size.count, bytes: size.bytes, countLimit: HelloListSize.countLimit, bytesLimit: HelloListSize.bytesLimit)
    }

    /// Admits `hello`, or says why not. `keyAdmitted`: the connection came through CURVE with a key on the
    /// allowlist (on tcp every connection has), which admits an outside client as the cookie does.
    func admit(_ hello: Hello, plugins: [PluginSupervisor.Plugin], keyAdmitted: Bool = false) -> Result<Admitted, BusProtocolError> {
        // The bus's own rule was checked as the hello was read; the product's source names are its table's.
        if let problem = table.nameProblem(with: hello.name) { return .failure(problem) }
        if let plugin = plugins.first(where: { $0.spec.name == hello.name }) {
            guard BusCredential.matches(hello.credential, plugin.liveCredential) else {
                return .failure(.notAdmitted("'\(hello.name)' is a configured plugin: only the process the broker started for it may use that name, "
                    + "and it proves it with its per-launch credential (\(BusCredential.environmentKey)); a pid proves nothing"))
            }
            return .success(.supervised(plugin))
        }
        if hello.role == .tool && BusCredential.matches(hello.credential, toolCredential) { return .success(.outside(actsForPerson: true)) }
        // A client the allowlist admitted needs no credential, but one it presents must be right.
        guard (keyAdmitted && hello.credential == nil) || BusCredential.matches(hello.credential, cookie) else {
            return .failure(.notAdmitted("an outside client presents the cookie from \(runtimeDirectory.cookiePath) (readable only by the broker's user) "
                + "in its hello's 'credential'; the shieldbus tools and the SDK read it themselves"))
        }
        if table.isExclusive(hello.role), let holder = plugins.first(where: { $0.spec.role == hello.role }) {
            return .failure(.roleNotAllowed("the role '\(hello.role.rawValue)' belongs to the configured plugin '\(holder.spec.name)'"))
        }
        guard grants.contains(where: { ($0.name == nil || $0.name == hello.name) && $0.roles.contains(hello.role) }) else {
            let allowed = Set(grants.filter { $0.name == nil || $0.name == hello.name }.flatMap(\.roles)).map(\.rawValue).sorted()
            let toolHint = hello.role == .tool ? "; the person's tools present the tool credential (\(runtimeDirectory.toolCredentialPath)) instead of the cookie" : ""
            return .failure(.roleNotAllowed("the configuration's `clients:` does not let '\(hello.name)' take the role '\(hello.role.rawValue)'"
                + " (it may take: \(allowed.isEmpty ? "nothing" : allowed.joined(separator: ", ")))\(toolHint)"))
        }
        return .success(.outside(actsForPerson: false))
    }

    /// Whether `credential` belongs to this user: the cookie, the tool credential, or a running plugin's launch credential.
    func isTrusted(_ credential: String?, plugins: [PluginSupervisor.Plugin]) -> Bool {
        BusCredential.matches(credential, cookie) || BusCredential.matches(credential, toolCredential)
            || plugins.contains { BusCredential.matches(credential, $0.liveCredential) }
    }
}
