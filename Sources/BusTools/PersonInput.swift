import BusProtocol
import Configuration

/// One of the person's actions as the device's input request (`input.<verb>.request` and its body): what
/// `shieldbus do`, `os-update`, `notification tap` and the Studio's buttons send.
public struct PersonInput: Equatable {
    public let action: PersonAction
    public var verb: String { action.verb.rawValue }
    public var body: JSONValue { action.requestBody }

    /// An action that cannot become a request, and why.
    public typealias Invalid = PersonAction.Invalid

    /// The actions, as `shieldbus do` names them.
    public static let actions = PersonVerb.names

    /// The request for `action` with its `value` (`PersonAction(verb:value:tab:isPrivate:app:)`).
    public init(action: String, value: String? = nil, tab: Int = 1, isPrivate: Bool = false, app: String? = nil) throws {
        self.action = try PersonAction(verb: action, value: value, tab: tab, isPrivate: isPrivate, app: app)
    }
}
