// Validation of app-group names, which become store file names.
import Foundation

/// Rules for app-group names such as `group.com.example.focus`.
enum GroupName {
    /// Whether a name may hold `byte`: ASCII letters, digits, `.`, `-` and `_` — a name is a file name on every
    /// platform, never a path.
    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"): return true
        default: return false
        }
    }

    /// Throws `AppGroupStoreError.invalidGroupName` unless `name` is a valid app-group name.
    static func validate(_ name: String) throws {
        func reject(_ reason: String) -> AppGroupStoreError { .invalidGroupName(name: name, reason: reason) }
        guard !name.isEmpty else { throw reject("the name is empty") }
        guard name.count <= 200 else { throw reject("the name is longer than 200 characters") }
        // Byte by byte: `String.contains` of a string is Foundation's search, and every store open checks its name.
        if name.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }) { throw reject("it contains a slash") }
        if let bad = name.unicodeScalars.first(where: { !$0.isASCII || !isAllowed(UInt8($0.value)) }) {
            // Whitespace anywhere is named as such (a valid name never gets here: `CharacterSet` is slow to ask).
            if name.unicodeScalars.contains(where: CharacterSet.whitespacesAndNewlines.contains) { throw reject("it contains whitespace") }
            throw reject("it contains '\(bad)'")
        }
        // A leading '.' would make a hidden file; a leading '-' reads as an option to tools.
        if name.hasPrefix(".") || name.hasPrefix("-") { throw reject("it starts with '\(name.first!)'") }
        // The names a store and a group's files had beside the groups' folders: a group so named would be taken for them.
        for reserved in [".sqlite", ".container"] where name.hasSuffix(reserved) { throw reject("it ends in '\(reserved)'") }
    }
}
