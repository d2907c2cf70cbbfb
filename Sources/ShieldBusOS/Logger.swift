// ShieldBusOS, imported as `os` (a module alias, Package.swift): os as far as extension code logs with it — `Logger(subsystem:category:)` and its privacy-annotated messages,
// written to the plugin's log (standard error, which the broker keeps per plugin). Nothing else of Apple's `os`
// (signposts, activities, `os_unfair_lock`) exists here (docs/porting-from-ios.md).
import Foundation

/// How a value is shown in a log message (`OSLogPrivacy`). A plugin's log is the developer's own, as a device
/// attached to the debugger shows it: every value is written out, whatever its privacy.
public struct OSLogPrivacy: Equatable, Sendable {
    let name: String
    public static let auto = OSLogPrivacy(name: "auto")
    public static let `public` = OSLogPrivacy(name: "public")
    public static let `private` = OSLogPrivacy(name: "private")
    public static let sensitive = OSLogPrivacy(name: "sensitive")
    public static func `private`(mask: OSLogPrivacy.Mask) -> OSLogPrivacy { .private }
    public static func sensitive(mask: OSLogPrivacy.Mask) -> OSLogPrivacy { .sensitive }
    /// How a private value is masked on a device (`.hash`): kept for the API's shape.
    public struct Mask: Equatable, Sendable {
        public static let hash = Mask()
        public static let none = Mask()
    }
}

/// The level of a log message (`OSLogType`).
public struct OSLogType: Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public static let `default` = OSLogType(description: "notice")
    public static let info = OSLogType(description: "info")
    public static let debug = OSLogType(description: "debug")
    public static let error = OSLogType(description: "error")
    public static let fault = OSLogType(description: "fault")
}

/// How a number is written (`OSLogIntegerFormatting`, `OSLogFloatFormatting`), reduced to what changes the text.
public enum OSLogIntegerFormatting: Sendable {
    case decimal, hex
    public static func decimal(explicitPositiveSign: Bool = false, minDigits: Int = 0) -> OSLogIntegerFormatting { .decimal }
    public static func hex(explicitPositiveSign: Bool = false, includePrefix: Bool = false, uppercase: Bool = false, minDigits: Int = 0) -> OSLogIntegerFormatting { .hex }
}

public struct OSLogFloatFormatting: Sendable {
    /// Digits after the point; nil for Swift's shortest form.
    let precision: Int?
    public static let fixed = OSLogFloatFormatting(precision: 6)
    public static let general = OSLogFloatFormatting(precision: nil)
    public static func fixed(precision: Int, explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(precision: precision)
    }
}

/// A log message with its interpolations (`OSLogMessage`): `"\(value, privacy: .public)"`.
public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral, Sendable {
    public let text: String

    public init(stringLiteral value: String) { text = value }
    public init(stringInterpolation: Interpolation) { text = stringInterpolation.text }

    public struct Interpolation: StringInterpolationProtocol {
        var text = ""
        public init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity) }
        public mutating func appendLiteral(_ literal: String) { text += literal }
        public mutating func appendInterpolation<T>(_ value: @autoclosure () -> T, privacy: OSLogPrivacy = .auto) {
            text += "\(value())"
        }
        public mutating func appendInterpolation<T: BinaryInteger>(_ value: @autoclosure () -> T, format: OSLogIntegerFormatting, privacy: OSLogPrivacy = .auto) {
            switch format {
            case .decimal: text += "\(value())"
            case .hex: text += String(value(), radix: 16)
            }
        }
        public mutating func appendInterpolation<T: BinaryFloatingPoint>(_ value: @autoclosure () -> T, format: OSLogFloatFormatting, privacy: OSLogPrivacy = .auto) {
            if let precision = format.precision {
                text += String(format: "%.\(precision)f", Double(value()))
            } else {
                text += "\(Double(value()))"
            }
        }
        public mutating func appendInterpolation(_ value: @autoclosure () -> Bool, format: OSLogBoolFormat, privacy: OSLogPrivacy = .auto) {
            text += format == .answer ? (value() ? "YES" : "NO") : (value() ? "true" : "false")
        }
    }
}

/// How a Bool is written (`OSLogBoolFormat`).
public enum OSLogBoolFormat: Sendable { case truth, answer }

/// A logger (`os.Logger`): each message becomes a line of the plugin's log, with its level, subsystem and category.
public struct Logger: Sendable {
    public let subsystem: String
    public let category: String

    public init(subsystem: String, category: String) {
        self.subsystem = subsystem
        self.category = category
    }

    /// A logger with no subsystem or category (`Logger()`).
    public init() {
        self.init(subsystem: "", category: "")
    }

    public func log(_ message: OSLogMessage) { write(.default, message) }
    public func log(level: OSLogType, _ message: OSLogMessage) { write(level, message) }
    public func trace(_ message: OSLogMessage) { write(.debug, message) }
    public func debug(_ message: OSLogMessage) { write(.debug, message) }
    public func info(_ message: OSLogMessage) { write(.info, message) }
    public func notice(_ message: OSLogMessage) { write(.default, message) }
    public func warning(_ message: OSLogMessage) { write(.error, message) }
    public func error(_ message: OSLogMessage) { write(.error, message) }
    public func critical(_ message: OSLogMessage) { write(.fault, message) }
    public func fault(_ message: OSLogMessage) { write(.fault, message) }

    /// The line: the device's time (bus time in a plugin), the level, `[subsystem:category]`, the message.
    private func write(_ level: OSLogType, _ message: OSLogMessage) {
        let stamp = ISO8601DateFormatter.string(from: Date(), timeZone: .current, formatOptions: [.withInternetDateTime])
        let scope = subsystem.isEmpty && category.isEmpty ? "" : " [\(subsystem):\(category)]"
        FileHandle.standardError.write(Data("\(stamp) \(level)\(scope) \(message.text)\n".utf8))
    }
}
