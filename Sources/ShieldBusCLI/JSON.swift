import BusProtocol

/// A value given as JSON text on the command line, stored as it is. Its type tag in the store is `JSON`:
/// readers decode it by the type they expect, whatever the tag.
struct JSON: Encodable {
    let value: JSONValue

    private struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: Encoder) throws {
        switch value {
        case .object(let members):
            var container = encoder.container(keyedBy: Key.self)
            for (key, member) in members { try container.encode(JSON(value: member), forKey: Key(stringValue: key)) }
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(JSON(value: element)) }
        default:
            var container = encoder.singleValueContainer()
            switch value {
            case .string(let string): try container.encode(string)
            case .int(let int): try container.encode(int)
            case .double(let double): try container.encode(double)
            case .bool(let bool): try container.encode(bool)
            default: try container.encodeNil()
            }
        }
    }
}
