import Foundation
import Logging
import ManagedSettingsUI
import ShieldBusSDK

/// The reference shield renderer's common part: the shield in the look the reference products share, worded by its
/// product — one subclass per product (`HabitLockShield`, `FocusWindowShield`, `SpeedBumpShield`) — and, after every
/// shield request, the first of the three blocking paths: the product's re-block check (lesson 1).
/// The check runs once the answer is sent: it makes two synchronous OS calls, and the person waits for the shield.
open class ReferenceShieldRenderer: ShieldConfigurationDataSource {
    public let options: ProductOptions
    public let defaults: SharedDefaults
    public let shields: Shields
    /// The folder the icon is looked up in (the renderer's own resources, as an extension's bundle).
    public let resources: URL?

    public required init(options: ProductOptions, defaults: SharedDefaults, resources: URL?) {
        self.options = options
        self.defaults = defaults
        self.resources = resources
        shields = Shields(storeName: options.store)
        super.init()
    }

    var logger: Logger? { PluginRuntime.current?.logger }
    var now: Date { BusClock.absoluteNow }

    /// The shield renderer of the product its options name.
    public static func make(options: ProductOptions, defaults: SharedDefaults, resources: URL?) -> ReferenceShieldRenderer {
        let type: ReferenceShieldRenderer.Type = options.product.pick(habitLock: HabitLockShield.self, focusWindow: FocusWindowShield.self, speedBump: SpeedBumpShield.self)
        return type.init(options: options, defaults: defaults, resources: resources)
    }

    // MARK: Path 1: the re-block check

    /// Records the day's first check, then runs the product's.
    open func reblockIfNeeded() {
        do {
            try recordDayCheck()
            try productReblockCheck()
        } catch {
            logger?.error("the shield's re-block check failed: \(error)")
        }
    }

    /// The product's part of the re-block check: what it shields again when it finds something over.
    open func productReblockCheck() throws {}

    /// Writes `lastShieldDayCheck` on the first check of each day only: a write on every request would be an App-Group
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

    /// The shield over `name`, in the product's words: a site is named "in the browser", a shield by category names it.
    open func configuration(for name: String, kind: Kind) -> ShieldConfiguration {
        let what: String
        switch kind {
        case .app: what = name
        case .web: what = "\(name) in the browser"
        case .category(let category): what = "\(name) (\(category))"
        }
        return productShield(over: what, kind: kind)
    }

    /// The product's shield over `what` (`shield(title:…)` gives it the shared look); the system's default shield
    /// unless the product words its own.
    open func productShield(over what: String, kind: Kind) -> ShieldConfiguration { ShieldConfiguration() }

    /// A shield in the look the reference products share — dark, with the renderer's icon — in the product's words.
    public func shield(title: String, subtitle: String, button: String, buttonColor: ShieldColor, secondButton: String? = nil) -> ShieldConfiguration {
        let white = ShieldColor.white
        return ShieldConfiguration(
            backgroundBlurStyle: .systemThinMaterialDark, backgroundColor: ShieldColor(red: 0.08, green: 0.10, blue: 0.16), icon: icon(),
            title: .init(text: title, color: white), subtitle: .init(text: subtitle, color: ShieldColor(white: 0.75)),
            primaryButtonLabel: .init(text: button, color: white), primaryButtonBackgroundColor: buttonColor,
            secondaryButtonLabel: secondButton.map { .init(text: $0, color: ShieldColor(white: 0.65)) })
    }

    /// The icon from the renderer's own resources. A missing file gives the default icon and a warning, never
    /// a silently empty shield (the Rork write-up: UIImage(named:) reads the extension's bundle only).
    /// Once found, the icon is not looked up again (as `UIImage(named:)` caches the image it loaded): the lookup is
    /// on the path of every shield the person waits for.
    open func icon() -> ShieldIcon? {
        guard let name = options.icon else { return nil }
        if let foundIcon { return foundIcon }
        // A file's name joined to the folder as text and asked for by `stat`: a URL's first `appendingPathComponent` and
        // `FileManager.default` are made at their first use, and this runs at every launch of a short-lived renderer.
        // Any other name (a path, `.`, `..`, none) is resolved as a URL resolves it.
        let isFileName = !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(UInt8(ascii: "/"))
        let found: (path: String, name: String)? = resources.map { folder in
            guard !isFileName else { return ("\(folder.path)/\(name)", name) }
            let file = folder.appendingPathComponent(name)
            return (file.path, file.lastPathComponent)
        }
        var status = stat()
        guard let found, stat(found.path, &status) == 0 else {
            logger?.warning("the shield icon '\(name)' is not in the renderer's resources (\(resources?.path ?? "none")); the default icon is shown")
            return nil
        }
        let icon = ShieldIcon(found.name)
        foundIcon = icon
        return icon
    }

    private var foundIcon: ShieldIcon?
}
