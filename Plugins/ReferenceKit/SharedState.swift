import Foundation
import ShieldBusSDK

/// The App-Group keys the reference plugins agree on — the Habit Doom write-up's minimum shared state
/// (lesson 4), plus the focus window's passes and the speed bump's nudges. Each plugin writes only its slice.
public enum SharedKey {
    // The companion app's slice.
    public static let isCurrentlyUnlocked = "isCurrentlyUnlocked"
    public static let quotaEndTimestamp = "quotaEndTimestamp"
    public static let globalSerializedTokens = "globalSerializedTokens"
    public static let globalSerializedCategoryTokens = "globalSerializedCategoryTokens"
    public static let globalSerializedWebDomainTokens = "globalSerializedWebDomainTokens"
    /// Habits completed on a day: `habits.2026-11-23` → [names].
    public static func habits(on day: String) -> String { "habits.\(day)" }
    // The shield renderer's slice.
    public static let lastShieldDayCheck = "lastShieldDayCheck"
    // The action delegate's slice.
    public static let passUntil = "passUntil"
    public static let passApplication = "passApplication"
    /// Grace passes used on a day: `graceTally.2026-11-23` → count.
    public static func graceTally(on day: String) -> String { "graceTally.\(day)" }
    public static let nudgeApplication = "nudge.application"
    public static let nudgeCooldownUntil = "nudge.cooldownUntil"
    public static let nudgeCount = "nudge.count"
    // The activity monitor's slice (and the check chain's, `CheckChain.Keys`).
    /// The day the device showed when a speed bump was raised ("2026-11-23"): its shields end with that day.
    public static let speedBumpDay = "monitor.speedBumpDay"
    /// The true instant the speed bump was last raised (seconds since 1970): whether a threshold came after a cooldown.
    public static let speedBumpRaised = "monitor.speedBumpRaised"
    /// A dismiss came while the day check after a move to a later date was pending: the new day's threshold, if its count
    /// reaches it, comes by this instant (the whole minute after the move).
    public static let dayCheckAnswerBy = "monitor.dayCheckAnswerBy"
    /// Every grace pass still running, app token → end (seconds since 1970): the delegate's record holds the last one only.
    public static let passes = "monitor.passes"
    /// The app the last dismiss let through, in the tokens of the OS update since (`DismissedApplication`).
    public static let dismissedApplicationNow = "monitor.dismissedApplication"
}


/// Why the shared lock state cannot be used. Reading never repairs: a failed read is reported, never
/// "fixed" by writing an empty value back (lesson 4).
public enum LockStateError: Error, CustomStringConvertible {
    case undecodableTokens(key: String, detail: String)

    public var description: String {
        switch self {
        case let .undecodableTokens(key, detail):
            return "the stored tokens under \(key) do not decode (\(detail)); they are left as they are"
        }
    }
}

/// The lock's state as every path reads it: the flag, the timestamp, and the tokens to re-block.
public struct LockState: Equatable {
    public var isCurrentlyUnlocked: Bool
    public var quotaEnd: Date?
    public var blockList: BlockList

    /// Whether an unlock is running at `now`. Never the flag alone: a timer that should have cleared it may
    /// have been suspended (lesson 6), so the timestamp decides.
    public func isUnlockActive(at now: Date) -> Bool {
        isCurrentlyUnlocked && (quotaEnd.map { $0 > now } ?? false)
    }

    /// Reads the lock state, its five keys as one state of the store (every shield's re-block check reads it).
    /// Undecodable tokens throw — the caller leaves the store alone.
    public static func read(from defaults: SharedDefaults) throws -> LockState {
        try defaults.snapshot { reader in
            LockState(isCurrentlyUnlocked: try reader.bool(forKey: SharedKey.isCurrentlyUnlocked) ?? false,
                      quotaEnd: try reader.double(forKey: SharedKey.quotaEndTimestamp).map(Date.init(timeIntervalSince1970:)),
                      blockList: try blockList(in: reader))
        }
    }

    public static func readBlockList(from defaults: SharedDefaults) throws -> BlockList {
        try defaults.snapshot { try blockList(in: $0) }
    }

    private static func blockList(in reader: SharedDefaultsSnapshot) throws -> BlockList {
        BlockList(applications: try tokens(ApplicationToken.self, SharedKey.globalSerializedTokens, reader),
                  categories: try tokens(ActivityCategoryToken.self, SharedKey.globalSerializedCategoryTokens, reader),
                  webDomains: try tokens(WebDomainToken.self, SharedKey.globalSerializedWebDomainTokens, reader))
    }

    /// Tokens are stored as base64 of a JSON array (as the write-up does).
    private static func tokens<T: StringIdentifier>(_ type: T.Type, _ key: String, _ defaults: SharedDefaultsSnapshot) throws -> Set<T> {
        guard let text = try defaults.string(forKey: key) else { return [] }
        guard let data = Data(base64Encoded: text) else { throw LockStateError.undecodableTokens(key: key, detail: "not base64") }
        do {
            return try decodeTokens(T.self, data)
        } catch {
            throw LockStateError.undecodableTokens(key: key, detail: "\(error)")
        }
    }

    /// A list's JSON array: plain strings with the bus's reader, anything else with `JSONDecoder`.
    private static func decodeTokens<T: StringIdentifier>(_ type: T.Type, _ json: Data) throws -> Set<T> {
        if let strings = plainStrings(json) { return Set(strings.map(T.init(rawValue:))) }
        return Set(try JSONDecoder().decode([T].self, from: json))
    }

    /// The array of strings `serialize` writes, read with BusProtocol's strict reader (every shield's re-block check
    /// reads the three lists); nil for anything else — an escape, another type — which goes to `JSONDecoder`, which
    /// reads it or says what is wrong.
    private static func plainStrings(_ json: Data) -> [String]? {
        let bytes = [UInt8](json)
        guard !bytes.contains(UInt8(ascii: "\\")), case .array(let items)? = try? JSONValue(parsing: bytes) else { return nil }
        var strings: [String] = []
        for item in items {
            guard case .string(let string) = item else { return nil }
            strings.append(string)
        }
        return strings
    }

    /// Serializes tokens for storage, checking that they read back the same before anything is overwritten.
    public static func serialize<T: StringIdentifier>(_ tokens: Set<T>) throws -> String {
        let sorted = tokens.sorted()
        let json = try plainJSON(sorted).map { $0.withUnsafeBufferPointer { Data(buffer: $0) } } ?? JSONEncoder().encode(sorted)
        let text = json.base64EncodedString()
        guard let back = Data(base64Encoded: text), try decodeTokens(T.self, back) == tokens else {
            throw LockStateError.undecodableTokens(key: "(new value)", detail: "the serialized tokens do not read back")
        }
        return text
    }

    /// `JSONEncoder`'s bytes for tokens whose strings it writes as they are (printable ASCII but `"`, `\` and `/`,
    /// which it escapes), written without it: the companion app saves the selection at every launch, where
    /// `JSONEncoder` and `JSONDecoder` cost their first uses again. Nil for any other string, left to `JSONEncoder`.
    private static func plainJSON<T: StringIdentifier>(_ sorted: [T]) -> [UInt8]? {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (index, token) in sorted.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            for byte in token.rawValue.utf8 {
                guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte != UInt8(ascii: "/") else { return nil }
                out.append(byte)
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}

