/// The rule for names on the bus (plugins, tools, taps): what a person reads in `status`, `tap` and the journal
/// must be what it looks like, so only lowercase ASCII letters, digits and `-`, 1 to 64 bytes — no capitals
/// (`Broker`), no look-alikes from other scripts (a Cyrillic `о`), no control or zero-width characters.
public enum BusName {
    /// The name the bus itself uses as its events' source; no client may take it. A product's own sources (Screen
    /// Time's OS and scenario player) are in its table (`BusTable.sourceNames`).
    public static let reserved: Set<String> = ["broker"]

    /// Why `name` is not a valid client name, or nil when it is; `sources`: the product's own source names, which no
    /// client may take either.
    public static func problem(with name: String, sources: Set<String> = []) -> BusProtocolError? {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count) else {
            return .badName(name, reason: "must be 1 to 64 bytes long (it has \(bytes.count))")
        }
        let allowed = bytes.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
        guard allowed else { return .badName(name, reason: "may contain only lowercase ASCII letters a-z, digits 0-9 and '-'") }
        if reserved.contains(name) || sources.contains(name) || name.hasPrefix("peer-") {
            let names = (reserved.union(sources).sorted() + ["peer-…"]).joined(separator: ", ")
            return .badName(name, reason: "is reserved (\(names) name the system's own sources)")
        }
        return nil
    }
}

/// Text from the bus made safe for a terminal: control characters (C0, DEL, C1), format characters (zero-width,
/// bidirectional overrides) and other invisible scalars are shown as `\u{…}` escapes instead of acting on it.
public enum TerminalText {
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// JSON text made safe for a terminal, still valid JSON meaning the same: the characters `escaped` shows
    /// as `\u{…}` become JSON `\uXXXX` escapes (JSON text has them only inside strings).
    public static func escapedJSON(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: needsEscape) else { return json }
        var out = ""
        for scalar in json.unicodeScalars {
            guard needsEscape(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 {
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { return true }
        if scalar.value < 0x7F { return false }  // printable ASCII, the usual text: no look-up of its properties
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .privateUse, .surrogate: return true
        default: return false
        }
    }
}
