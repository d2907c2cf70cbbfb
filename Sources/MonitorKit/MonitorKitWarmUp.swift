// MonitorKitWarmUp: MonitorKit's part of a plugin's launch template's warm-up (docs/architecture.md § 8, "The
// template's warm-up"), which the SDK's cannot name: MonitorKit is built on the SDK.
import ShieldBusSDK

/// Called by the template's constructor (`CLaunchTemplate`) after the SDK's warm-up, under the same rules
/// (ShieldBusSDK's `LaunchTemplateWarmUp`): it only names types. A program without MonitorKit has no such function.
@_cdecl("shieldbus_monitor_kit_warm_up")
func monitorKitWarmUp() {
    LaunchTemplateWarmUp.name(CheckChain.encodingContainerTypes)
}
