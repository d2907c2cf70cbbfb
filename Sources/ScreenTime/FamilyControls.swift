import Foundation

/// Whether the app may use Screen Time (FamilyControls' `AuthorizationStatus`). JSON: the case name.
public enum AuthorizationStatus: String, Hashable, Sendable, Codable, CaseIterable {
    /// The app has not asked yet, or the request is still pending.
    case notDetermined
    /// The person, parent or guardian refused the request.
    case denied
    /// The app may shield, monitor and report.
    case approved
}

/// Who the app asks authorization for (FamilyControls' `FamilyControlsMember`). JSON: the case name.
public enum FamilyControlsMember: String, Hashable, Sendable, Codable, CaseIterable {
    /// The person using the device authorizes the app for themselves (self-control apps).
    case individual
    /// A child account in a Family Sharing group; a parent or guardian must authorize.
    case child
}

/// Errors of authorization requests (FamilyControls' `FamilyControlsError`). JSON: the case name.
public enum FamilyControlsError: String, Error, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible, LocalizedError {
    /// Screen Time restrictions (or device management) forbid this app from using Family Controls.
    case restricted
    /// The system failed to set up Family Controls (for example, the region doesn't support it).
    case unavailable
    /// The device isn't signed into an iCloud account that can authorize (`.child` needs a child account in a family).
    case invalidAccountType
    /// The method's arguments are invalid.
    case invalidArgument
    /// Another authorized app already provides parental controls.
    case authorizationConflict
    /// The person, parent or guardian canceled the authorization request.
    case authorizationCanceled
    /// The request needed the network and it failed.
    case networkError
    /// The device has no passcode, which individual authorization requires.
    case authenticationMethodUnavailable
    /// The app must be authorized before it may do this.
    case unauthorized

    /// What went wrong and how to fix it.
    public var description: String {
        switch self {
        case .restricted:
            return "Family Controls is restricted on this device (Screen Time restrictions or device management forbid it); lift the restriction in the device settings."
        case .unavailable:
            return "The system failed to set up Family Controls (for example, the region doesn't support it); try again later or on a supported device."
        case .invalidAccountType:
            return "The device isn't signed into a valid account: .child authorization needs a child account in a Family Sharing group; use .individual for self-control apps."
        case .invalidArgument:
            return "The request's arguments are invalid; check the member kind and the tokens passed."
        case .authorizationConflict:
            return "Another authorized app already provides parental controls on this device; revoke it first."
        case .authorizationCanceled:
            return "The person, parent or guardian canceled the authorization request; ask again when they are ready."
        case .networkError:
            return "Authorization needed the network and the request failed; retry when online."
        case .authenticationMethodUnavailable:
            return "Individual authorization needs a device passcode; set one and ask again."
        case .unauthorized:
            return "The app isn't authorized to provide parental controls; request authorization with AuthorizationCenter first."
        }
    }

    /// The same text as `description`.
    public var errorDescription: String? { description }
}
