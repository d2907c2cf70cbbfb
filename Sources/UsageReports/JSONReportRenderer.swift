import Foundation

/// Renders reports (or any of this module's Codable values) as stable JSON: sorted keys,
/// ISO 8601 dates, pretty printed, so the same report always gives the same bytes.
public struct JSONReportRenderer: Sendable {
    /// Creates a renderer.
    public init() {}

    /// The JSON text of `value`.
    /// - Throws: `EncodingError` only for non-finite numbers, which a ledger never produces.
    public func render<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try Self.makeEncoder().encode(value), as: UTF8.self)
    }

    /// An encoder with this renderer's settings.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// A decoder that reads what `makeEncoder()` writes.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
