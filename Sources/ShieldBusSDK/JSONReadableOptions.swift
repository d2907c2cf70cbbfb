import BusProtocol

/// Options a plugin reads from its configuration entry's JSON itself (`JSONValue`), not through `Codable`.
///
/// A short-lived extension (ios-realistic) reads its options at every launch, and `JSONDecoder` made that ~1.3 M
/// instructions, most of them the Swift runtime's conformance scans for the decoding containers' generic types: the
/// largest part of the plugin's own start (docs/benchmarks.md, "A plugin launch's own work").
/// `PluginRuntime.launchOptions(as:)` reads such a type and names the plugin and the type when it does not fit.
public protocol JSONReadableOptions {
    /// Reads the options from their JSON; a mismatch throws an error naming the key and what was expected.
    init(json: JSONValue) throws
}
