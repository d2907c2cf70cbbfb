import Foundation

/// An extension's host context (`NSExtensionContext`), as screen-time extensions meet it: its `open(_:)` fails, as
/// it does in these sandboxes on iOS — there silently ("best-effort"), here with the reason, reported on the bus.
// No state of its own: one context may serve every thread.
open class NSExtensionContext: @unchecked Sendable {
    /// The context every extension of this process shares.
    public static let current = NSExtensionContext()

    public init() {}

    /// Opening a URL from a Screen Time extension fails: the completion handler gets false, and the failure is
    /// reported with the Tether write-up's lesson.
    open func open(_ URL: URL, completionHandler: ((Bool) -> Void)? = nil) {
        SilentCall.reportFailure("NSExtensionContext.open(\(URL.absoluteString))", Self.lesson)
        completionHandler?(false)
    }

    /// What to do instead (the Tether write-up): what the seed learnt on devices.
    public static let lesson = "a Screen Time extension cannot open URLs (UIApplication.shared.open is unavailable, NSExtensionContext.open fails in these sandboxes): record a pending route in the App Group, post a notification, and let the app route when the person taps it and it comes to the foreground"
}
