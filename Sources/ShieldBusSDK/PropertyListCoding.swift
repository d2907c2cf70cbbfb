import AppGroupStore
import Foundation

/// Property-list values (what `UserDefaults` stores) in the App-Group store: a single string, number, Bool, Date or
/// Data keeps its own type tag, as `SharedDefaults` users write them; an array or a dictionary is a
/// `PropertyListValue`, whose dates and data stay dates and data.
enum PropertyListCoding {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Stores `value`; nil when it is no property-list value.
    static func store(_ value: Any, forKey key: String, in store: SharedDefaults) throws -> StoreChange? {
        switch value {
        case let string as String: return try store.set(string, forKey: key)
        case let date as Date: return try store.set(date, forKey: key)
        case let data as Data: return try store.set(data, forKey: key)
        case let url as URL: return try store.set(url.absoluteString, forKey: key)
        default:
            switch Scalar(value) {
            case .bool(let bool)?: return try store.set(bool, forKey: key)
            case .int(let int)?: return try store.set(int, forKey: key)
            case .double(let double)?: return try store.set(double, forKey: key)
            case nil:
                guard let tree = PropertyListValue(value) else { return nil }
                return try store.set(tree, forKey: key)
            }
        }
    }

    /// A number or a Bool, whatever Swift or Foundation type holds it (iOS takes them all as NSNumber).
    enum Scalar {
        case bool(Bool), int(Int), double(Double)

        init?(_ value: Any) {
            if type(of: value) == Bool.self, let bool = value as? Bool {
                self = .bool(bool)
            } else if let number = value as? NSNumber, type(of: value) is NSNumber.Type {
                switch String(cString: number.objCType) {
                case "c", "B": self = .bool(number.boolValue)
                case "f", "d": self = .double(number.doubleValue)
                default: self = .int(number.intValue)
                }
            } else if let integer = value as? any BinaryInteger, let int = Int(exactly: integer) {
                self = .int(int)
            } else if let floating = value as? any BinaryFloatingPoint {
                self = .double(Double(floating))
            } else {
                return nil
            }
        }

        /// As iOS gives numbers back: an NSNumber, which `as? Int`, `as? Double` and `as? Bool` all read.
        var object: NSNumber {
            switch self {
            case .bool(let bool): return NSNumber(value: bool)
            case .int(let int): return NSNumber(value: int)
            case .double(let double): return NSNumber(value: double)
            }
        }
    }

    /// The stored value as `UserDefaults` gives it back; nil when it cannot be read.
    static func value(of entry: StoredEntry) -> Any? {
        let bytes = Data(entry.rawJSON.utf8)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        switch entry.typeTag {
        case "String": return try? decoder.decode(String.self, from: bytes)
        case "Bool": return (try? decoder.decode(Bool.self, from: bytes)).map { NSNumber(value: $0) }
        case "Int", "Int64", "Int32": return (try? decoder.decode(Int.self, from: bytes)).map { NSNumber(value: $0) }
        case "Double", "Float": return (try? decoder.decode(Double.self, from: bytes)).map { NSNumber(value: $0) }
        case "Date": return try? decoder.decode(Date.self, from: bytes)
        case "Data": return try? decoder.decode(Data.self, from: bytes)
        case "PropertyListValue": return (try? decoder.decode(PropertyListValue.self, from: bytes))?.value
        default:
            // A value a plugin stored with its own Codable type: its JSON, as arrays, dictionaries and scalars.
            return try? JSONSerialization.jsonObject(with: bytes, options: [.fragmentsAllowed])
        }
    }
}

/// A property-list tree, as JSON: scalars as themselves, a Date as `{"$date": seconds}`, Data as `{"$data": base64}`.
indirect enum PropertyListValue: Codable {
    case string(String), bool(Bool), int(Int), double(Double), date(Date), data(Data)
    case array([PropertyListValue]), dictionary([String: PropertyListValue])

    init?(_ value: Any) {
        switch value {
        case let string as String: self = .string(string)
        case _ where PropertyListCoding.Scalar(value) != nil:
            switch PropertyListCoding.Scalar(value)! {
            case .bool(let bool): self = .bool(bool)
            case .int(let int): self = .int(int)
            case .double(let double): self = .double(double)
            }
        case let date as Date: self = .date(date)
        case let data as Data: self = .data(data)
        case let url as URL: self = .string(url.absoluteString)
        case let array as [Any]:
            var items: [PropertyListValue] = []
            for item in array {
                guard let converted = PropertyListValue(item) else { return nil }
                items.append(converted)
            }
            self = .array(items)
        case let dictionary as [String: Any]:
            var items: [String: PropertyListValue] = [:]
            for (key, item) in dictionary {
                guard let converted = PropertyListValue(item) else { return nil }
                items[key] = converted
            }
            self = .dictionary(items)
        default: return nil
        }
    }

    var value: Any {
        switch self {
        case .string(let value): return value
        case .bool(let value): return NSNumber(value: value)
        case .int(let value): return NSNumber(value: value)
        case .double(let value): return NSNumber(value: value)
        case .date(let value): return value
        case .data(let value): return value
        case .array(let items): return items.map(\.value)
        case .dictionary(let items): return items.mapValues(\.value)
        }
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let bool = try? container.decode(Bool.self) { self = .bool(bool); return }
        if let int = try? container.decode(Int.self) { self = .int(int); return }
        if let double = try? container.decode(Double.self) { self = .double(double); return }
        if let string = try? container.decode(String.self) { self = .string(string); return }
        if let array = try? container.decode([PropertyListValue].self) { self = .array(array); return }
        let dictionary = try container.decode([String: PropertyListValue].self)
        if dictionary.count == 1, case .double(let seconds)? = dictionary["$date"] { self = .date(Date(timeIntervalSince1970: seconds)); return }
        if dictionary.count == 1, case .int(let seconds)? = dictionary["$date"] { self = .date(Date(timeIntervalSince1970: Double(seconds))); return }
        if dictionary.count == 1, case .string(let base64)? = dictionary["$data"], let data = Data(base64Encoded: base64) { self = .data(data); return }
        self = .dictionary(dictionary)
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .date(let value): try container.encode(["$date": value.timeIntervalSince1970])
        case .data(let value): try container.encode(["$data": value.base64EncodedString()])
        case .array(let items): try container.encode(items)
        case .dictionary(let items): try container.encode(items)
        }
    }
}
