// ShieldBusUIKit, imported as `UIKit` (a module alias, Package.swift): UIKit as far as a shield configuration reaches into it: `UIColor`, `UIImage` and `UIBlurEffect.Style` under
// Apple's names, and nothing else — no views, no windows, no `UIApplication`. A Linux build has no UIKit; this module
// exists so that a ShieldConfiguration extension compiles with its `import UIKit` unchanged, and a use of anything
// else fails to compile here rather than pretending to work (docs/porting-from-ios.md).
@_exported import ScreenTime
import Foundation

/// A color, as a shield takes it (`UIColor`): 8-bit RGBA, written to the bus as `#RRGGBBAA`.
///
/// Dynamic system colors (`.label`, `.systemBackground`) resolve to their light-appearance value: a shield
/// configuration is a value sent to the OS, not a view that redraws.
public typealias UIColor = ShieldColor

/// An image on a shield (`UIImage`): the name of an image bundled with the shield plugin or an SF Symbol's name.
public typealias UIImage = ShieldIcon

/// The blur behind a shield (`UIBlurEffect`): only its styles exist here.
public enum UIBlurEffect {
    /// The blur styles, with UIKit's case names.
    public typealias Style = ShieldBlurStyle
}

extension ShieldColor {
    /// A color from components in 0...1 (`UIColor(red:green:blue:alpha:)`).
    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        self.init(red: Double(red), green: Double(green), blue: Double(blue), alpha: Double(alpha))
    }

    /// A gray (`UIColor(white:alpha:)`).
    public init(white: CGFloat, alpha: CGFloat) {
        self.init(white: Double(white), alpha: Double(alpha))
    }

    /// A color from hue, saturation and brightness in 0...1 (`UIColor(hue:saturation:brightness:alpha:)`).
    public init(hue: CGFloat, saturation: CGFloat, brightness: CGFloat, alpha: CGFloat) {
        let h = (Double(hue).truncatingRemainder(dividingBy: 1) + 1).truncatingRemainder(dividingBy: 1) * 6
        let s = min(max(Double(saturation), 0), 1), v = min(max(Double(brightness), 0), 1)
        let chroma = v * s, x = chroma * (1 - abs(h.truncatingRemainder(dividingBy: 2) - 1)), m = v - chroma
        let (r, g, b): (Double, Double, Double)
        switch Int(h) {
        case 0: (r, g, b) = (chroma, x, 0)
        case 1: (r, g, b) = (x, chroma, 0)
        case 2: (r, g, b) = (0, chroma, x)
        case 3: (r, g, b) = (0, x, chroma)
        case 4: (r, g, b) = (x, 0, chroma)
        default: (r, g, b) = (chroma, 0, x)
        }
        self.init(red: r + m, green: g + m, blue: b + m, alpha: Double(alpha))
    }

    /// The same color with another opacity (`withAlphaComponent(_:)`).
    public func withAlphaComponent(_ alpha: CGFloat) -> ShieldColor {
        let channels = channels
        return ShieldColor(channels.red, channels.green, channels.blue, UInt8((min(max(Double(alpha), 0), 1) * 255).rounded()))
    }

    /// The color's components in 0...1 (`getRed(_:green:blue:alpha:)`); always true.
    public func getRed(_ red: UnsafeMutablePointer<CGFloat>?, green: UnsafeMutablePointer<CGFloat>?,
                       blue: UnsafeMutablePointer<CGFloat>?, alpha: UnsafeMutablePointer<CGFloat>?) -> Bool {
        let channels = channels
        red?.pointee = CGFloat(channels.red) / 255
        green?.pointee = CGFloat(channels.green) / 255
        blue?.pointee = CGFloat(channels.blue) / 255
        alpha?.pointee = CGFloat(channels.alpha) / 255
        return true
    }

    // UIKit's named colors; the system ones in their light-appearance values.
    public static let red = ShieldColor(255, 0, 0)
    public static let green = ShieldColor(0, 255, 0)
    public static let blue = ShieldColor(0, 0, 255)
    public static let cyan = ShieldColor(0, 255, 255)
    public static let yellow = ShieldColor(255, 255, 0)
    public static let magenta = ShieldColor(255, 0, 255)
    public static let orange = ShieldColor(255, 128, 0)
    public static let purple = ShieldColor(128, 0, 128)
    public static let brown = ShieldColor(153, 102, 51)
    public static let label = ShieldColor.black
    public static let secondaryLabel = ShieldColor(60, 60, 67, 153)
    public static let tertiaryLabel = ShieldColor(60, 60, 67, 76)
    public static let systemBackground = ShieldColor.white
    public static let secondarySystemBackground = ShieldColor(242, 242, 247)
    public static let systemGray = ShieldColor(142, 142, 147)
    public static let systemGreen = ShieldColor(52, 199, 89)
    public static let systemOrange = ShieldColor(255, 149, 0)
    public static let systemYellow = ShieldColor(255, 204, 0)
    public static let systemPink = ShieldColor(255, 45, 85)
    public static let systemPurple = ShieldColor(175, 82, 222)
    public static let systemTeal = ShieldColor(48, 176, 199)
    public static let systemIndigo = ShieldColor(88, 86, 214)
    public static let tintColor = ShieldColor.systemBlue
}
