// YAMLDuplicateKeys: refusing a key written twice in one mapping, which the YAML parser would silently resolve to the last.

import Yams

extension YAMLValue {
    /// `mapping(allowed:)`, and a key written twice in the mapping is refused rather than the last one winning unseen.
    func uniqueMapping(allowed: [String]? = nil) throws -> [String: YAMLValue] {
        let members = try mapping(allowed: allowed)
        guard case .mapping(let mapping) = node else { return members }
        var firstLines: [String: Int] = [:]
        for (keyNode, _) in mapping {
            guard case .scalar(let scalar) = keyNode else { continue }
            let line = keyNode.mark?.line ?? self.line
            if let first = firstLines[scalar.string] {
                throw ConfigurationError(file: file, line: line, column: keyNode.mark?.column ?? column,
                                         key: keyPath.isEmpty ? scalar.string : "\(keyPath).\(scalar.string)",
                                         message: "the key is written twice in this mapping (first on line \(first))")
            }
            firstLines[scalar.string] = line
        }
        return members
    }
}
