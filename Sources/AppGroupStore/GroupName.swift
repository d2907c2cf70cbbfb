// Validation of app-group names, which become store file names.
import Foundation

/// Rules for app-group names such as `group.com.example.focus`.
enum GroupName {
    /// Characters a name may hold: a name is a file name on every platform, never a path.
    private static let allowed = CharacterSet(charactersIn:
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")

    /// Throws `AppGroupStoreError.invalidGroupName` unless `name` is a valid app-group name.
    static func validate(_ name: String) throws {
        func reject(_ reason: String) -> AppGroupStoreError { .invalidGroupName(name: name, reason: reason) }
        guard !name.isEmpty else { throw reject("the name is empty") }
        guard name.count <= 200 else { throw reject("the name is longer than 200 characters") }
        if name.contains("/") || name.contains("\\") { throw reject("it contains a slash") }
        if name.unicodeScalars.contains(where: CharacterSet.whitespacesAndNewlines.contains) {
            throw reject("it contains whitespace")
        }
        if let bad = name.unicodeScalars.first(where: { !allowed.contains($0) }) {
            throw reject("it contains '\(bad)'")
        }
        // A leading '.' would make a hidden file; a leading '-' reads as an option to tools.
        if name.hasPrefix(".") || name.hasPrefix("-") { throw reject("it starts with '\(name.first!)'") }
    }
}
