// FamilyControls, as iOS names it: authorization and the person's selection of apps, categories and web domains.
@_exported import ScreenTime
import DeviceAPI
import Foundation
import ShieldBusSDK

/// FamilyControls' authorization (`AuthorizationCenter`), as the companion app asks for it.
public final class AuthorizationCenter: @unchecked Sendable {
    public static let shared = AuthorizationCenter()

    /// The app's authorization as last answered by the OS to this launch (`authorizationStatus`): a new process
    /// starts not knowing it, as each launch of a plugin hosted in a test's process does.
    public var authorizationStatus: AuthorizationStatus {
        PluginRuntime.current?.launchValue(Self.statusKey) as? AuthorizationStatus ?? .notDetermined
    }

    private static let statusKey = "FamilyControls.AuthorizationCenter.status"

    /// Asks the person for authorization (`requestAuthorization(for:) async throws`): returns when they answer;
    /// throws `FamilyControlsError.authorizationCanceled` when they refuse, as iOS does.
    public func requestAuthorization(for member: FamilyControlsMember) async throws {
        let status = try await PluginRuntime.onPluginThread { try self.requestAuthorization(for: member) as AuthorizationStatus }
        if status == .denied { throw FamilyControlsError.authorizationCanceled }
    }

    /// Asks the person for authorization and returns the answer (`approved`, `denied`, or `notDetermined` while
    /// the configuration says `ask` and nobody has answered yet): ShieldBus's synchronous form.
    @discardableResult
    public func requestAuthorization(for member: FamilyControlsMember) throws -> AuthorizationStatus {
        let status = try PluginRuntime.running().call(DeviceTopic.authorizationRequest, AuthorizationRequest(member: member), expecting: AuthorizationState.self).status
        try PluginRuntime.running().setLaunchValue(status, for: Self.statusKey)
        return status
    }

    /// What the person picks in the FamilyActivityPicker (only the main app shows the picker). On iOS the picker
    /// is a SwiftUI view; here the configuration's `selection:` is what the person picks.
    public func pickActivities() throws -> FamilyActivitySelection {
        let runtime = try PluginRuntime.running()
        guard !runtime.isExtension else { throw PluginError.unavailableInExtension("FamilyActivityPicker") }
        return try runtime.call(DeviceTopic.pickerRequest, NoValue(), expecting: PickerResult.self).selection
    }
}
