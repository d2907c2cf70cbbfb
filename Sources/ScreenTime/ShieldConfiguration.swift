import Foundation

/// The blur behind a shield, named as Apple's `UIBlurEffect.Style`. JSON: the case name.
public enum ShieldBlurStyle: String, Hashable, Sendable, Codable, CaseIterable {
    /// A very light blur.
    case extraLight
    /// A light blur.
    case light
    /// A dark blur.
    case dark
    /// The regular, appearance-adapting blur.
    case regular
    /// A more opaque, appearance-adapting blur.
    case prominent
    /// The thinnest system material, adapting to the appearance.
    case systemUltraThinMaterial
    /// A thin system material, adapting to the appearance.
    case systemThinMaterial
    /// The default system material, adapting to the appearance.
    case systemMaterial
    /// A thick system material, adapting to the appearance.
    case systemThickMaterial
    /// The material of system chrome (bars), adapting to the appearance.
    case systemChromeMaterial
    /// The thinnest system material, light.
    case systemUltraThinMaterialLight
    /// A thin system material, light.
    case systemThinMaterialLight
    /// The default system material, light.
    case systemMaterialLight
    /// A thick system material, light.
    case systemThickMaterialLight
    /// The material of system chrome, light.
    case systemChromeMaterialLight
    /// The thinnest system material, dark.
    case systemUltraThinMaterialDark
    /// A thin system material, dark.
    case systemThinMaterialDark
    /// The default system material, dark.
    case systemMaterialDark
    /// A thick system material, dark.
    case systemThickMaterialDark
    /// The material of system chrome, dark.
    case systemChromeMaterialDark
}

/// How a shield looks (ManagedSettingsUI's `ShieldConfiguration`).
///
/// Only these parts can be customized: no arbitrary views, at most two buttons. A nil field
/// means "the system's default" for it, except `secondaryButtonLabel`, where nil means the
/// shield has a single button. JSON: an object of the fields that are set.
public struct ShieldConfiguration: Hashable, Sendable, Codable {
    /// The blur behind the shield.
    public var backgroundBlurStyle: ShieldBlurStyle?
    /// The color over the blur.
    public var backgroundColor: ShieldColor?
    /// The icon: a resource name or path bundled with the shield plugin (`UIImage(named:)`), or a symbol.
    public var icon: ShieldIcon?
    /// The title.
    public var title: Label?
    /// The text under the title.
    public var subtitle: Label?
    /// The label of the primary button.
    public var primaryButtonLabel: Label?
    /// The primary button's color.
    public var primaryButtonBackgroundColor: ShieldColor?
    /// The label of the secondary button; nil for a single-button shield.
    public var secondaryButtonLabel: Label?

    /// A configuration; every part defaults to nil (the system's default; a single button).
    public init(
        backgroundBlurStyle: ShieldBlurStyle? = nil,
        backgroundColor: ShieldColor? = nil,
        icon: ShieldIcon? = nil,
        title: Label? = nil,
        subtitle: Label? = nil,
        primaryButtonLabel: Label? = nil,
        primaryButtonBackgroundColor: ShieldColor? = nil,
        secondaryButtonLabel: Label? = nil
    ) {
        self.backgroundBlurStyle = backgroundBlurStyle
        self.backgroundColor = backgroundColor
        self.icon = icon
        self.title = title
        self.subtitle = subtitle
        self.primaryButtonLabel = primaryButtonLabel
        self.primaryButtonBackgroundColor = primaryButtonBackgroundColor
        self.secondaryButtonLabel = secondaryButtonLabel
    }

    /// A text on a shield and its color (`ShieldConfiguration.Label`). JSON: `{"text":"...","color":"#RRGGBBAA"}`.
    public struct Label: Hashable, Sendable, Codable {
        /// The text.
        public var text: String
        /// The text's color.
        public var color: ShieldColor

        /// A label.
        public init(text: String, color: ShieldColor) {
            self.text = text
            self.color = color
        }
    }

    /// The system's default shield: gray, "Restricted", one "OK" button.
    ///
    /// Shown when no shield plugin answers in time, and where a plugin leaves a part nil.
    public static let `default` = ShieldConfiguration(
        backgroundBlurStyle: .systemMaterial,
        backgroundColor: ShieldColor(white: 0.92),
        icon: nil,
        title: Label(text: "Restricted", color: .black),
        subtitle: Label(text: "You can't use this because it's restricted.", color: .darkGray),
        primaryButtonLabel: Label(text: "OK", color: .white),
        primaryButtonBackgroundColor: .systemBlue,
        secondaryButtonLabel: nil
    )

    /// What the system draws: every nil part taken from `default`, except that a nil
    /// secondary button stays nil (one button) and a nil icon stays nil (the system's icon).
    public func withSystemDefaults() -> ShieldConfiguration {
        let fallback = ShieldConfiguration.default
        return ShieldConfiguration(
            backgroundBlurStyle: backgroundBlurStyle ?? fallback.backgroundBlurStyle,
            backgroundColor: backgroundColor ?? fallback.backgroundColor,
            icon: icon,
            title: title ?? fallback.title,
            subtitle: subtitle ?? fallback.subtitle,
            primaryButtonLabel: primaryButtonLabel ?? fallback.primaryButtonLabel,
            primaryButtonBackgroundColor: primaryButtonBackgroundColor ?? fallback.primaryButtonBackgroundColor,
            secondaryButtonLabel: secondaryButtonLabel
        )
    }
}

/// A button press on a shield (ManagedSettings' `ShieldAction`). JSON: the case name.
public enum ShieldAction: String, Hashable, Sendable, Codable, CaseIterable {
    /// The person pressed the primary button.
    case primaryButtonPressed
    /// The person pressed the secondary button.
    case secondaryButtonPressed
}

/// What the system does after a `ShieldActionDelegate` handled a press (ManagedSettings'
/// `ShieldActionResponse`). The delegate never lifts a shield itself. JSON: the case name.
public enum ShieldActionResponse: String, Hashable, Sendable, Codable, CaseIterable {
    /// Close the shielded app or web page: the person goes back to the home screen.
    case close
    /// Defer the response: the shield stays and redraws, asking the configuration plugin
    /// again, so that it can show a changed state (for example, a pass was granted elsewhere).
    case `defer`
    /// Nothing more to do: the shield stays as it is.
    case none
}

/// An image on a shield (stands in for `UIImage`): the name of a resource bundled with the shield plugin, or an SF
/// Symbol's name (`symbol:NAME`). JSON: that string.
public struct ShieldIcon: Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The resource's name or path, or `symbol:` and a symbol's name.
    public var name: String

    /// An icon bundled with the shield plugin.
    public init(_ name: String) { self.name = name }
    public init(stringLiteral name: String) { self.name = name }
    /// An image bundled with the plugin (`UIImage(named:)`); nil for an empty name.
    public init?(named name: String) {
        guard !name.isEmpty else { return nil }
        self.name = name
    }
    /// An SF Symbol (`UIImage(systemName:)`); nil for an empty name.
    public init?(systemName: String) {
        guard !systemName.isEmpty else { return nil }
        name = "symbol:" + systemName
    }

    /// The symbol's name, when the icon is one.
    public var systemName: String? { name.hasPrefix("symbol:") ? String(name.dropFirst(7)) : nil }
    public var description: String { name }

    public init(from decoder: Decoder) throws { name = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
