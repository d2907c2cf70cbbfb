import BusProtocol
import Foundation
import Yams

/// A mistake in a file the user wrote: which file, line and key, and what was expected.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let column: Int
    /// The key path, e.g. `plugins[2].restart`.
    public let key: String
    public let message: String

    public init(file: String, line: Int, column: Int, key: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.message = message
    }

    public var description: String {
        let place = line > 0 ? "\(file):\(line):\(column)" : file
        return key.isEmpty ? "\(place): \(message)" : "\(place): \(key): \(message)"
    }
}

/// A node of a YAML file, with the file name and key path it came from, and typed accessors that report
/// mistakes as `ConfigurationError`s naming the file, line and key.
public struct YAMLValue {
    public let node: Node
    public let file: String
    private let path: YAMLKeyPath

    /// The key path, e.g. `plugins[2].restart`.
    public var keyPath: String { path.spelled }

    init(node: Node, file: String, path: YAMLKeyPath) {
        self.node = node
        self.file = file
        self.path = path
    }

    /// The most values a file may expand to, its aliases expanded — or one per byte of its text, when that is more:
    /// far above any hand-written configuration or scenario, far below what a "billion laughs" of nested aliases asks
    /// for, and never reached by a file without aliases, however long (each value takes at least a byte, and a long
    /// generated scenario such as the heavy-user year has more values than the fixed limit).
    public static let maximumExpandedValues = 200_000

    /// The expansion limit of a text of `bytes` bytes.
    public static func expansionLimit(forTextOf bytes: Int) -> Int { max(maximumExpandedValues, bytes) }
    /// The deepest nesting of flow collections (`[`, `{`), and the most indentation plus block indicators on one
    /// line: bounds that keep the recursive YAML composer far from the end of any thread's stack.
    public static let maximumFlowNesting = 128
    public static let maximumLineNesting = 512

    /// Parses YAML text; a syntax error names the file and line. A file whose aliases expand beyond
    /// `maximumExpandedValues` is refused before anything walks the expansion.
    public static func parse(_ text: String, file: String) throws -> YAMLValue {
        do {
            let mayHaveAliases = try refuseDeepNesting(text, file: file)
            // Composing shares an aliased node instead of copying it, so memory stays that of the text.
            // Plain scalars are typed by `YAMLPlainScalar` (only `jsonValue` asks), not by the default resolver's patterns.
            guard let node = try Yams.compose(yaml: text, .basic) else {
                throw ConfigurationError(file: file, line: 1, column: 1, key: "", message: "the file is empty")
            }
            // Without aliases nothing expands: the tree is no larger than its text makes it.
            if mayHaveAliases { try refuseExpansionBomb(node, file: file, limit: expansionLimit(forTextOf: text.utf8.count)) }
            return YAMLValue(node: node, file: file, path: .root)
        } catch let error as YamlError {
            throw Self.describe(error, file: file)
        }
    }

    /// An upper bound of the nesting, from the text alone (before the recursive composer sees it): the depth of
    /// `[`/`{` outside quotes and comments, and per line its indentation plus its `-`, `?` and `:` characters.
    /// It may overestimate, never underestimate. Returns whether the text has a `*` anywhere (an alias may be one).
    private static func refuseDeepNesting(_ text: String, file: String) throws -> Bool {
        var flowDepth = 0, line = 1, column = 0, lineNesting = 0
        var inIndentation = true, inComment = false, escaped = false, hasAsterisk = false
        var quote: UInt8?
        var previous: UInt8 = 0x0A
        /// The last byte that was not a space: a quote opens a scalar only where a scalar may begin.
        var lastSignificant: UInt8 = 0x0A
        // Takes the place as arguments: a nested function capturing the counters would keep them in memory, not registers.
        func refuse(_ what: String, line: Int, column: Int) -> ConfigurationError {
            ConfigurationError(file: file, line: line, column: column, key: "", message: "\(what); refused (a file built to exhaust the reader?)")
        }
        // Over a copy of the bytes: indexing a string's own view checks each index, several times the loop's own work.
        for byte in Array(text.utf8) {
            column += 1
            let before = previous, significantBefore = lastSignificant
            previous = byte
            if byte != 0x20 && byte != 0x09 { lastSignificant = byte }
            if byte == 0x0A {
                // A quoted scalar may go on, but counting its next lines as structure can only overestimate.
                line += 1; column = 0; lineNesting = 0
                inIndentation = true; inComment = false; quote = nil; escaped = false
                continue
            }
            if byte == UInt8(ascii: "*") { hasAsterisk = true }
            if inComment { continue }
            if let open = quote {
                if escaped { escaped = false } else if open == UInt8(ascii: "\""), byte == UInt8(ascii: "\\") { escaped = true } else if byte == open { quote = nil }
                continue
            }
            if inIndentation && byte != 0x20 { inIndentation = false }
            switch byte {
            case 0x20 where inIndentation, UInt8(ascii: "-"), UInt8(ascii: "?"), UInt8(ascii: ":"):
                lineNesting += 1
                if lineNesting > maximumLineNesting { throw refuse("a line is indented or nested more than \(maximumLineNesting) levels deep", line: line, column: column) }
            case UInt8(ascii: "#") where before == 0x20 || before == 0x09:
                inComment = true
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                switch significantBefore {
                case 0x0A, UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "?"): quote = byte
                default: break
                }
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                flowDepth += 1
                if flowDepth > maximumFlowNesting { throw refuse("lists and mappings are nested more than \(maximumFlowNesting) levels deep", line: line, column: column) }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                flowDepth = max(0, flowDepth - 1)
            default:
                break
            }
        }
        return hasAsterisk
    }

    /// Counts the values of the expanded document, stopping at the limit (so the count costs at most that much).
    private static func refuseExpansionBomb(_ root: Node, file: String, limit: Int) throws {
        var budget = limit
        var pending = [root]
        while let node = pending.popLast() {
            budget -= 1
            if budget < 0 {
                throw ConfigurationError(file: file, line: node.mark?.line ?? 0, column: node.mark?.column ?? 0, key: "",
                                         message: "the file expands to more than \(limit) values through its aliases (*name), the last counted written here — a YAML bomb? Refused")
            }
            switch node {
            case .scalar: break
            case .sequence(let sequence): pending.append(contentsOf: sequence)
            case .mapping(let mapping):
                for (key, value) in mapping {
                    pending.append(key)
                    pending.append(value)
                }
            }
        }
    }

    /// Reads and parses a YAML file.
    public static func load(path: String) throws -> YAMLValue {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(file: path, line: 0, column: 0, key: "", message: "cannot read the file (does it exist?)")
        }
        return try parse(String(decoding: data, as: UTF8.self), file: path)
    }

    private static func describe(_ error: YamlError, file: String) -> ConfigurationError {
        switch error {
        case let .scanner(context, problem, mark, _), let .parser(context, problem, mark, _):
            let what = [context?.description, problem].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ": ")
            return ConfigurationError(file: file, line: mark.line, column: mark.column, key: "", message: "YAML syntax error: \(what)")
        case let .composer(context, problem, mark, _):
            let what = [context?.description, problem].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ": ")
            return ConfigurationError(file: file, line: mark.line, column: mark.column, key: "", message: "YAML error: \(what)")
        default:
            return ConfigurationError(file: file, line: 0, column: 0, key: "", message: "YAML error: \(error)")
        }
    }

    public var line: Int { node.mark?.line ?? 0 }
    public var column: Int { node.mark?.column ?? 0 }

    /// An error at this node.
    public func error(_ message: String) -> ConfigurationError {
        ConfigurationError(file: file, line: line, column: column, key: keyPath, message: message)
    }

    private var kindName: String {
        switch node {
        case .scalar(let scalar): return "'\(scalar.string)'"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        }
    }

    // MARK: Structure

    /// The members of a mapping. Keys not in `allowed` are refused (a typo is never silently ignored).
    public func mapping(allowed: [String]? = nil) throws -> [String: YAMLValue] {
        try members(allowed: allowed).members
    }

    /// The members of a mapping, and the first key written a second time in it (the last one written is kept).
    func members(allowed: [String]?) throws -> (members: [String: YAMLValue], repeated: Node?) {
        guard case .mapping(let mapping) = node else { throw error("expected a mapping (key: value lines), got \(kindName)") }
        var members = [String: YAMLValue](minimumCapacity: mapping.count)
        var repeated: Node?
        let container = YAMLKeyPath.Container(path)
        for (keyNode, valueNode) in mapping {
            guard case .scalar(let keyScalar) = keyNode else { throw error("keys must be plain names") }
            let key = keyScalar.string
            if let allowed, !allowed.contains(key) {
                let suggestion = closest(to: key, in: allowed).map { " — did you mean '\($0)'?" } ?? ""
                throw ConfigurationError(file: file, line: keyNode.mark?.line ?? line, column: keyNode.mark?.column ?? column,
                                         key: YAMLKeyPath(container: container, step: .key(key)).spelled,
                                         message: "unknown key\(suggestion) (allowed here: \(allowed.joined(separator: ", ")))")
            }
            let value = YAMLValue(node: valueNode, file: file, path: YAMLKeyPath(container: container, step: .key(key)))
            if members.updateValue(value, forKey: key) != nil, repeated == nil {
                repeated = keyNode
            }
        }
        return (members, repeated)
    }

    /// The elements of a list.
    public func list() throws -> [YAMLValue] {
        Array(try elements())
    }

    /// The elements of a list, each made as it is reached (a long list is not copied whole).
    func elements() throws -> LazyMapSequence<EnumeratedSequence<Node.Sequence>, YAMLValue> {
        guard case .sequence(let sequence) = node else { throw error("expected a list, got \(kindName)") }
        let container = YAMLKeyPath.Container(path), file = file
        return sequence.enumerated().lazy.map { YAMLValue(node: $1, file: file, path: YAMLKeyPath(container: container, step: .index($0))) }
    }

    /// How many elements a list has (0 for anything else).
    var count: Int {
        if case .sequence(let sequence) = node { return sequence.count }
        return 0
    }

    /// Whether the node is YAML null (`~`, `null` or empty).
    public var isNull: Bool {
        if case .scalar(let scalar) = node { return scalar.string.isEmpty || scalar.string == "~" || scalar.string == "null" }
        return false
    }

    // MARK: Scalars

    public func string() throws -> String {
        guard case .scalar(let scalar) = node else { throw error("expected a text value, got \(kindName)") }
        return scalar.string
    }

    public func int() throws -> Int {
        guard let value = Int(try string().replacingOccurrences(of: "_", with: "")) else {
            throw error("expected a whole number, got \(kindName)")
        }
        return value
    }

    public func double() throws -> Double {
        guard let value = Double(try string()) else { throw error("expected a number, got \(kindName)") }
        return value
    }

    public func bool() throws -> Bool {
        switch try string().lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error("expected true or false, got \(kindName)")
        }
    }

    /// A value from a fixed set of words.
    public func oneOf<T: RawRepresentable>(_ type: T.Type) throws -> T where T.RawValue == String, T: CaseIterable {
        try oneOf(Array(T.allCases))
    }

    /// One of `values`, named by its word.
    public func oneOf<T: RawRepresentable>(_ values: [T]) throws -> T where T.RawValue == String {
        let word = try string()
        if let value = values.first(where: { $0.rawValue == word }) { return value }
        let allowed = values.map(\.rawValue)
        let suggestion = closest(to: word, in: allowed).map { " — did you mean '\($0)'?" } ?? ""
        throw error("expected one of \(allowed.joined(separator: ", ")), got '\(word)'\(suggestion)")
    }

    public func stringList() throws -> [String] { try list().map { try $0.string() } }

    public func stringMap() throws -> [String: String] { try mapping().mapValues { try $0.string() } }
}

extension YAMLValue {
    /// YAML to JSON. Plain scalars take the type YAML gives them (numbers, true/false, null); quoted ones stay text.
    public func jsonValue() throws -> JSONValue {
        let value = self
        switch value.node {
        case .mapping: return .object(try value.uniqueMapping().mapValues { try $0.jsonValue() })
        case .sequence: return .array(try value.list().map { try $0.jsonValue() })
        case .scalar(let scalar):
            let node = value.node
            let tag = YAMLPlainScalar.tagName(of: scalar)
            if tag == .null { return .null }
            if tag == .bool, let bool = node.bool { return .bool(bool) }
            if tag == .int {
                guard let int = node.int else { throw value.error("the number \(scalar.string) does not fit in 64 bits; quote it to send text") }
                return .int(Int64(int))
            }
            if tag == .float, let double = node.float {
                guard double.isFinite else { throw value.error("JSON has no infinite or NaN numbers; quote it to send text") }
                return .double(double)
            }
            return .string(scalar.string)
        }
    }
}

/// Where a value sits in its file, spelled as a key path (`plugins[2].restart`) only when asked: most values are
/// read without a mistake to report. The members of one mapping or list share their container's path.
struct YAMLKeyPath: Sendable {
    /// A container's path, shared by its members.
    final class Container: Sendable {
        let path: YAMLKeyPath
        init(_ path: YAMLKeyPath) { self.path = path }
    }

    enum Step: Sendable {
        case key(String)
        case index(Int)
    }

    let container: Container?
    let step: Step?

    static let root = YAMLKeyPath(container: nil, step: nil)

    var spelled: String {
        guard let step else { return "" }
        let prefix = container?.path.spelled ?? ""
        switch step {
        case .key(let key): return prefix.isEmpty ? key : "\(prefix).\(key)"
        case .index(let index): return "\(prefix)[\(index)]"
        }
    }
}

/// The closest candidate by edit distance, when it is close enough to be a likely typo.
public func closest(to word: String, in candidates: [String]) -> String? {
    func distance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var current = [i + 1]
            for (j, cb) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
    let scored = candidates.map { ($0, distance(Array(word.lowercased()), Array($0.lowercased()))) }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, word.count / 3) else { return nil }
    return best.0
}