import Foundation
import Logging
import ShieldBusSDK

/// An app's set-up that failed where trying again can succeed — a full or read-only disk, an OS that did not answer
/// in time: said on the bus (`state.call-failed`) and tried again a minute later and at the next foreground, not
/// only at the next launch, which may be days away. The app decides which failures it hands over (`canPass`); an
/// authorization that is not approved cancels a pending try (the next approval sets the app up anew), so a day the
/// person denied gets nothing from here.
public final class SetUpRetry {
    /// The app timer that tries again.
    public static let timerID = "set-up-again"
    private static let delay: TimeInterval = 60

    private unowned let app: App
    /// What is set up, as the failure names it ("the companion app's set-up").
    private let what: String
    /// Whether a set-up failed and waits to be tried again.
    public private(set) var isPending = false

    public init(app: App, what: String) {
        self.app = app
        self.what = what
    }

    private var logger: Logger? { PluginRuntime.current?.logger }

    /// Says that the set-up `when` ("at launch", "again") failed with `error`, and plans another try.
    public func failed(_ error: Error, when: String) {
        isPending = true
        SilentCall.reportFailure("\(what) \(when)", "\(error); tried again in a minute and when the app comes to the foreground")
        do {
            try app.scheduleTimer(id: Self.timerID, at: BusClock.absoluteNow.addingTimeInterval(Self.delay))
        } catch {
            logger?.warning("no timer to set up again: \(error)")
        }
    }

    /// A `familycontrols.authorization.changed` that is not an approval: nothing is tried again until one.
    public func authorizationLost() {
        isPending = false
    }

    /// A set-up succeeded on another occasion (an approval): nothing waits to be tried again.
    public func succeeded() {
        isPending = false
    }

    /// Runs `setUp` (true when it succeeded) if a failed set-up waits: at the retry timer and at a foreground.
    public func tryAgain(_ setUp: () -> Bool) {
        guard isPending else { return }
        isPending = false
        if setUp() { logger?.notice("set up after an earlier failure") }
    }

    /// Whether trying again can get past `error`: storage that was full, read-only or locked, an OS call that got no
    /// answer in time. Not a refusal (unauthorized, the activity limit), a wrong configuration or damaged data.
    public static func canPass(_ error: Error) -> Bool {
        switch error {
        case let error as AppGroupStoreError:
            switch error {
            case .storage, .busy: return true
            default: return false
            }
        case PluginError.timeout: return true
        default: return false
        }
    }
}
