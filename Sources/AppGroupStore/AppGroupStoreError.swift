// Errors of the app-group store: each says what is wrong and how to fix it.
import Foundation
import SQLite

/// Who owns a key: a writer and the slice pattern of theirs that matches it.
public struct SliceClaim: Equatable, Sendable, CustomStringConvertible {
    /// The writer (a component name, e.g. `monitor`).
    public let writer: String
    /// The pattern: an exact key, or a prefix ending in `*`.
    public let pattern: String

    /// Creates a claim of `pattern` by `writer`.
    public init(writer: String, pattern: String) {
        self.writer = writer
        self.pattern = pattern
    }

    public var description: String { "'\(pattern)' of writer '\(writer)'" }
}

/// A failure of the app-group store.
public enum AppGroupStoreError: Error, CustomStringConvertible, LocalizedError {
    /// The app-group name cannot name a store file.
    case invalidGroupName(name: String, reason: String)
    /// No app group of that name exists (where iOS's `UserDefaults(suiteName:)` would silently return nil).
    case unknownSuite(name: String, existing: [String])
    /// The store file is not a database or fails `PRAGMA quick_check`; nothing was written to it.
    case corruptStore(path: String, detail: String)
    /// The store was written by a newer format than this code reads.
    case unsupportedFormat(path: String, found: Int64, supported: Int64)
    /// The stored value of `key` does not decode as the requested type; the stored value is unchanged.
    case decodeFailed(key: String, expectedType: String, storedType: String, underlying: Error)
    /// The value could not be encoded as JSON (e.g. a NaN `Double`); nothing was written.
    case encodeFailed(key: String, type: String, underlying: Error)
    /// A write through a `SharedDefaults` opened without a writer.
    case readOnly(suite: String)
    /// The writer has no slice declared in this app group, so it may write nothing.
    case noSlice(writer: String, group: String)
    /// The key is not in the writer's slice; `owner` is the slice that does hold it, if any.
    case outsideSlice(key: String, writer: String, slice: [String], owner: SliceClaim?)
    /// A slice declaration is malformed.
    case invalidSlice(writer: String, pattern: String, reason: String)
    /// Two writers' slice declarations claim the same keys.
    case overlappingSlices(SliceClaim, SliceClaim)
    /// Another process or thread held the group's write lock for longer than the busy timeout.
    case busy(group: String, timeout: TimeInterval)
    /// A `SharedDefaultsTransaction` was used after its `transaction` closure returned.
    case transactionClosed(group: String)
    /// Any other storage failure, with SQLite's error.
    case storage(group: String, SQLiteError)

    /// True when the group's storage, not its name or contents, refused (a full or read-only disk, a lock held past
    /// the timeout): the same call may succeed later, unchanged.
    public var isStorageUnavailable: Bool {
        switch self {
        case .busy: return true
        case .storage(_, let error): return error.isStorageUnavailable
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .invalidGroupName(let name, let reason):
            return "invalid app group name '\(name)': \(reason). "
                + "Use letters, digits, '.', '-' and '_', like 'group.com.example.focus'."
        case .unknownSuite(let name, let existing):
            let suggestion = Self.closest(to: name, among: existing).map { " Did you mean '\($0)'?" } ?? ""
            let list = existing.isEmpty ? "none" : existing.joined(separator: ", ")
            return "no app group named '\(name)' exists (iOS would silently return nil here).\(suggestion) "
                + "Existing app groups: \(list). Check the spelling, or add the group to the configuration."
        case .corruptStore(let path, let detail):
            return "the app-group store '\(path)' is damaged (\(detail)); nothing was written to it. "
                + "Restore it from a backup, or move it aside (with its -wal and -shm files) "
                + "and create the group again to start empty."
        case .unsupportedFormat(let path, let found, let supported):
            return "the app-group store '\(path)' has format \(found), newer than the supported \(supported); "
                + "use the ShieldBus version that wrote it."
        case .decodeFailed(let key, let expectedType, let storedType, let underlying):
            return "the value of '\(key)' was stored as \(storedType) and does not decode as \(expectedType) "
                + "(\(underlying)); it was left unchanged. Read it with the type it was written with."
        case .encodeFailed(let key, let type, let underlying):
            return "the \(type) value for '\(key)' cannot be stored as JSON (\(underlying)); nothing was written."
        case .readOnly(let suite):
            return "app group '\(suite)' was opened without a writer, so it is read-only; "
                + "pass writer: to SharedDefaults to write."
        case .noSlice(let writer, let group):
            return "writer '\(writer)' has no slice in app group '\(group)', so it may write nothing; "
                + "declare its slice (the keys it owns) in the configuration."
        case .outsideSlice(let key, let writer, let slice, let owner):
            let ownerText = owner.map { "it belongs to slice \($0)" } ?? "no writer's slice holds it"
            return "writer '\(writer)' may not write '\(key)': its slice is [\(slice.joined(separator: ", "))] "
                + "and \(ownerText). Write only your own keys, or change the slices in the configuration."
        case .invalidSlice(let writer, let pattern, let reason):
            return "invalid slice pattern '\(pattern)' for writer '\(writer)': \(reason). "
                + "A pattern is an exact key or a prefix ending in '*'."
        case .overlappingSlices(let first, let second):
            return "slices overlap: \(first) and \(second) can both match the same key; "
                + "every key must belong to one writer, so make the patterns disjoint."
        case .busy(let group, let timeout):
            return "app group '\(group)' stayed locked by another writer for more than \(timeout) s; "
                + "retry, or find the process that holds a long transaction."
        case .transactionClosed(let group):
            return "a transaction of app group '\(group)' was used after its closure returned; "
                + "use the transaction only inside the closure."
        case .storage(let group, let error):
            return "app group '\(group)': \(error)"
        }
    }

    public var errorDescription: String? { description }

    /// The name in `candidates` nearest to `name` by edit distance, if it is near enough to be a typo.
    static func closest(to name: String, among candidates: [String]) -> String? {
        let ranked = candidates.map { (name: $0, distance: editDistance(name, $0)) }
            .min { ($0.distance, $0.name) < ($1.distance, $1.name) }
        guard let best = ranked, best.distance <= max(2, name.count / 3) else { return nil }
        return best.name
    }

    /// Levenshtein distance: the fewest single-character edits that turn `a` into `b`.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for (i, charA) in a.enumerated() {
            var current = [i + 1]
            for (j, charB) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (charA == charB ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}

extension AppGroupStoreError {
    /// Whether the write was refused by the group's slices (the writer has none, or the key is outside it).
    public var isSliceRefusal: Bool {
        switch self {
        case .noSlice, .outsideSlice: return true
        default: return false
        }
    }
}
