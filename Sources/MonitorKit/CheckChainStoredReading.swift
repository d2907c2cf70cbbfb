// The check chain's state read from its stored JSON without `JSONDecoder`.
import AppGroupStore
import Foundation
import ShieldBusSDK

// Every planned check reads the chain's state, and a short-lived monitor does so at every launch: a `JSONDecoder` set
// up per read, with the first instantiation of its containers' generic types in each new process, costs more than the
// store's read. Each reading takes the form `SortedJSONEncoder` stores and gives nil for any other text, which then
// goes to `JSONDecoder`, which reads it or says what is wrong.

extension CheckChain.PlannedChecks {
    init?(storedJSON json: String) {
        guard case .object(let members)? = try? JSONValue(parsing: json), members.count == 2,
              let plannedAt = members["plannedAt"]?.doubleValue, case .object(let stored)? = members["times"] else { return nil }
        var times: [String: Int] = [:]
        times.reserveCapacity(stored.count)
        for (check, count) in stored {
            guard case .int(let count) = count, let count = Int(exactly: count) else { return nil }
            times[check] = count
        }
        self.init(plannedAt: plannedAt, times: times)
    }
}

extension CheckChain.PlannedCall {
    init?(storedJSON value: JSONValue) {
        guard case .object(let members) = value, members.count == 2, let at = members["at"]?.doubleValue,
              case .string(let activity)? = members["activity"] else { return nil }
        self.init(at: at, activity: activity)
    }

    static func list(storedJSON json: String) -> [Self]? {
        guard case .array(let elements)? = try? JSONValue(parsing: json) else { return nil }
        var calls: [Self] = []
        calls.reserveCapacity(elements.count)
        for element in elements {
            guard let call = Self(storedJSON: element) else { return nil }
            calls.append(call)
        }
        return calls
    }
}

extension CheckChain {
    /// `defaults`' value of `key` read from its stored text by `read`, or by `JSONDecoder` when `read` gives nil; nil
    /// when the key has no value; throws as `value(_:forKey:)` does.
    func storedValue<T: Decodable>(_ type: T.Type, forKey key: String, reading read: (String) -> T?) throws -> T? {
        guard let entry = try defaults.entry(forKey: key) else { return nil }
        return try read(entry.rawJSON) ?? entry.value(T.self)
    }
}
