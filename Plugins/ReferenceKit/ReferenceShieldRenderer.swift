import DeviceActivity
import Foundation
import Logging
import ManagedSettingsUI
import ShieldBusSDK

/// The reference shield renderer: the shield in the product's own voice — and, after every shield request, the
/// first of the three blocking paths: it checks for a new day or an expired unlock and re-blocks (lesson 1).
/// The check runs once the answer is sent: it makes two synchronous OS calls, and the person waits for the shield.
open class ReferenceShieldRenderer: ShieldConfigurationDataSource {
    public let options: ProductOptions
    public let defaults: SharedDefaults
    public let shields: Shields
    /// The folder the icon is looked up in (the renderer's own resources, as an extension's bundle).
    public let resources: URL?

    public init(options: ProductOptions, defaults: SharedDefaults, resources: URL?) {
        self.options = options
        self.defaults = defaults
        self.resources = resources
        shields = Shields(storeName: options.store)
        super.init()
    }

    var logger: Logger? { PluginRuntime.current?.logger }
    var now: Date { BusClock.absoluteNow }

    // MARK: Path 1: the re-block check

    /// Re-blocks when no unlock is running. An unlock ends at its absolute end: a new day (or a first check ever)
    /// does not cut it short — explore found an unlock across midnight cut at 00:00.
    open func reblockIfNeeded() {
        do {
            try recordDayCheck()
            switch options.product {
            case .habitLock:
                let state = try LockState.read(from: defaults)
                if !state.isUnlockActive(at: now) {
                    try shields.block(ReferenceMonitor.currentBlockList(state, center: DeviceActivityCenter(), names: ReferenceMonitorNames(options: options)))
                }
            case .focusWindow:
                // A pass that ended but was not yet taken back: take it back now.
                if let raw = try defaults.string(forKey: SharedKey.passApplication),
                   let until = try defaults.double(forKey: SharedKey.passUntil), until <= now.timeIntervalSince1970 {
                    try shields.reshield(application: ApplicationToken(rawValue: raw))
                }
            case .speedBump:
                break
            }
        } catch {
            logger?.error("the shield's re-block check failed: \(error)")
        }
    }

    /// Writes `lastShieldDayCheck` on the first check of each day only: a write on every request was an App-Group
    /// commit (an fdatasync) per shield, and the key says which day was last checked.
    func recordDayCheck() throws {
        let today = DayKey.string(now, in: BusClock.timeZone)
        if let last = try defaults.double(forKey: SharedKey.lastShieldDayCheck),
           DayKey.string(Date(timeIntervalSince1970: last), in: BusClock.timeZone) == today { return }
        try defaults.set(now.timeIntervalSince1970, forKey: SharedKey.lastShieldDayCheck)
    }

    open override func didAnswerConfigurationRequest() {
        reblockIfNeeded()
    }

    // MARK: The four entry points

    open override func configuration(shielding application: Application) -> ShieldConfiguration {
        configuration(for: application.localizedDisplayName ?? "This app", kind: .app)
    }

    open override func configuration(shielding application: Application, in category: ActivityCategory) -> ShieldConfiguration {
        configuration(for: application.localizedDisplayName ?? "This app", kind: .category(category.localizedDisplayName ?? "this category"))
    }

    open override func configuration(shielding webDomain: WebDomain) -> ShieldConfiguration {
        configuration(for: webDomain.domain ?? "This site", kind: .web)
    }

    open override func configuration(shielding webDomain: WebDomain, in category: ActivityCategory) -> ShieldConfiguration {
        configuration(for: webDomain.domain ?? "This site", kind: .category(category.localizedDisplayName ?? "this category"))
    }

    public enum Kind: Equatable {
        case app, web
        case category(String)
    }

    /// The product's wording for a shield over `name`.
    open func configuration(for name: String, kind: Kind) -> ShieldConfiguration {
        let what: String
        switch kind {
        case .app: what = name
        case .web: what = "\(name) in the browser"
        case .category(let category): what = "\(name) (\(category))"
        }
        let background = ShieldColor(red: 0.08, green: 0.10, blue: 0.16)
        let white = ShieldColor.white, muted = ShieldColor(white: 0.75)
        switch options.product {
        case .habitLock:
            let done = ((try? defaults.value([String].self, forKey: SharedKey.habits(on: DayKey.today()))) ?? nil)?.count ?? 0
            return ShieldConfiguration(
                backgroundBlurStyle: .systemThinMaterialDark, backgroundColor: background, icon: icon(),
                title: .init(text: "Habits first", color: white),
                subtitle: .init(text: "\(what) unlocks when today's habits are done (\(done) of \(options.habitsPerDay)).", color: muted),
                primaryButtonLabel: .init(text: "Close", color: white), primaryButtonBackgroundColor: ShieldColor(red: 0.2, green: 0.55, blue: 0.9))
        case .focusWindow:
            let used = (try? defaults.integer(forKey: SharedKey.graceTally(on: DayKey.today()))) ?? 0
            let yesterday = DayKey.string(now.addingTimeInterval(-86_400), in: BusClock.timeZone)
            let usedYesterday = (try? defaults.integer(forKey: SharedKey.graceTally(on: yesterday))) ?? 0
            var subtitle = "You chose to close \(what) during this window. Passes used today: \(used)."
            // The morning after, the tally is reflected back (the Rork write-up).
            if usedYesterday > 0 && used == 0 { subtitle += " Yesterday you used \(usedYesterday)." }
            return ShieldConfiguration(
                backgroundBlurStyle: .systemThinMaterialDark, backgroundColor: background, icon: icon(),
                title: .init(text: "This is your focus time", color: white), subtitle: .init(text: subtitle, color: muted),
                primaryButtonLabel: .init(text: "Back to focus", color: white), primaryButtonBackgroundColor: ShieldColor(red: 0.2, green: 0.55, blue: 0.9),
                secondaryButtonLabel: kind == .web ? nil : .init(text: "Open for \(options.passMinutes) minutes", color: ShieldColor(white: 0.65)))
        case .speedBump:
            return ShieldConfiguration(
                backgroundBlurStyle: .systemThinMaterialDark, backgroundColor: background, icon: icon(),
                title: .init(text: "A speed bump", color: white),
                subtitle: .init(text: "You've spent your mindful time on \(what) today. Your inner circle is a call away.", color: muted),
                primaryButtonLabel: .init(text: "Dismiss", color: white), primaryButtonBackgroundColor: ShieldColor(red: 0.35, green: 0.3, blue: 0.85))
        }
    }

    /// The icon from the renderer's own resources. A missing file gives the default icon and a warning, never
    /// a silently empty shield (the Rork write-up: UIImage(named:) reads the extension's bundle only).
    open func icon() -> ShieldIcon? {
        guard let name = options.icon else { return nil }
        guard let file = resources?.appendingPathComponent(name), FileManager.default.fileExists(atPath: file.path) else {
            logger?.warning("the shield icon '\(name)' is not in the renderer's resources (\(resources?.path ?? "none")); the default icon is shown")
            return nil
        }
        return ShieldIcon(file.lastPathComponent)
    }
}
