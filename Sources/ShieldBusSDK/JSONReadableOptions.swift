import BusProtocol

/// Options a plugin reads from its configuration entry's JSON itself (`JSONValue`), not through `Codable`.
///
/// A short-lived extension (ios-realistic) reads its options at every launch, and `JSONDecoder` would make each
/// launch pay the Swift runtime's conformance scans for the decoding containers' generic types
/// (docs/benchmarks.md, "Explore and launches").
/// `PluginRuntime.launchOptions(as:)` reads such a type and names the plugin and the type when it does not fit.
public protocol JSONReadableOptions {
    /// Reads the options from their JSON; a mismatch throws an error naming the key and what was expected.
    init(json: JSONValue) throws
}
