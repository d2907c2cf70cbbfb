// Slices: which writer owns which keys of an app group, and the check every write passes.
import BusProtocol
import Foundation

/// The slice declarations of one app group: writer -> key patterns.
///
/// A pattern is an exact key, or a prefix ending in `*` (`shield.*`, or `*` for every key): a `KeyPattern`.
/// Slices of different writers never overlap, so every key has at most one owner.
struct SliceTable: Equatable {
    /// Every claim, sorted by writer then pattern.
    let claims: [SliceClaim]

    /// Validates declarations: well-formed patterns, no pattern for the administrator, no overlap between writers.
    init(declaring slices: [String: [String]]) throws {
        var claims: [SliceClaim] = []
        for (writer, patterns) in slices {
            if writer.isEmpty || writer.unicodeScalars.contains(where: CharacterSet.whitespacesAndNewlines.contains) {
                throw AppGroupStoreError.invalidSlice(writer: writer, pattern: patterns.first ?? "",
                                                      reason: "the writer name is empty or holds whitespace")
            }
            if writer == SharedDefaults.administrator {
                throw AppGroupStoreError.invalidSlice(writer: writer, pattern: patterns.first ?? "",
                                                      reason: "'\(writer)' is the administrator and writes every key")
            }
            for pattern in Set(patterns) {
                if let problem = KeyPattern.problem(with: pattern) {
                    throw AppGroupStoreError.invalidSlice(writer: writer, pattern: pattern, reason: problem)
                }
                claims.append(SliceClaim(writer: writer, pattern: pattern))
            }
        }
        self.init(claims: claims)
        for (index, first) in self.claims.enumerated() {
            for second in self.claims[(index + 1)...] where first.writer != second.writer {
                if Self.overlap(first.pattern, second.pattern) {
                    throw AppGroupStoreError.overlappingSlices(first, second)
                }
            }
        }
    }

    /// Wraps claims already validated (read back from the store).
    init(claims: [SliceClaim]) {
        self.claims = claims.sorted { ($0.writer, $0.pattern) < ($1.writer, $1.pattern) }
    }

    /// The declarations as writer -> sorted patterns.
    var declarations: [String: [String]] {
        Dictionary(grouping: claims, by: \.writer).mapValues { $0.map(\.pattern) }
    }

    /// Throws unless `writer` may write `key`: the administrator always may, others only inside their slice.
    func authorize(key: String, writer: String, group: String) throws {
        guard writer != SharedDefaults.administrator else { return }
        let mine = claims.filter { $0.writer == writer }
        guard !mine.isEmpty else { throw AppGroupStoreError.noSlice(writer: writer, group: group) }
        guard !mine.contains(where: { Self.matches($0.pattern, key) }) else { return }
        throw AppGroupStoreError.outsideSlice(key: key, writer: writer, slice: mine.map(\.pattern),
                                              owner: claims.first { Self.matches($0.pattern, key) })
    }

    /// Whether `pattern` matches `key`.
    static func matches(_ pattern: String, _ key: String) -> Bool { KeyPattern.matches(pattern, key) }

    /// Whether some key matches both patterns.
    private static func overlap(_ a: String, _ b: String) -> Bool {
        switch (a.hasSuffix("*"), b.hasSuffix("*")) {
        case (false, false): return a == b
        case (true, false): return matches(a, b)
        case (false, true): return matches(b, a)
        case (true, true): return a.hasPrefix(b.dropLast()) || b.hasPrefix(a.dropLast())
        }
    }
}

extension SharedDefaults {
    /// Whether a key pattern (an exact key, or a prefix ending in `*`, as slices and `shared:` write them) matches `key`.
    public static func pattern(_ pattern: String, matches key: String) -> Bool { SliceTable.matches(pattern, key) }
}
