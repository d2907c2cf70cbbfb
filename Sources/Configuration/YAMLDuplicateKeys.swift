// YAMLDuplicateKeys: refusing a key written twice in one mapping, which the YAML parser would silently resolve to the last.

import Yams

extension YAMLValue {
    /// `mapping(allowed:)`, and a key written twice in the mapping is refused rather than the last one winning unseen.
    func uniqueMapping(allowed: [String]? = nil) throws -> [String: YAMLValue] {
        let (members, repeated) = try members(allowed: allowed)
        guard let repeated, case .scalar(let scalar) = repeated, case .mapping(let mapping) = node else { return members }
        // Only now is the first writing of the key looked for.
        let first = mapping.first { key, _ in
            if case .scalar(let other) = key { return other.string == scalar.string }
            return false
        }
        throw ConfigurationError(file: file, line: repeated.mark?.line ?? line, column: repeated.mark?.column ?? column,
                                 key: keyPath.isEmpty ? scalar.string : "\(keyPath).\(scalar.string)",
                                 message: "the key is written twice in this mapping (first on line \(first?.key.mark?.line ?? line))")
    }
}
