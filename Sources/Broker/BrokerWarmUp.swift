// BrokerWarmUp: the generic types a day's broker makes first as it serves, made once in the broker template so that each
// day forked from it finds them made (docs/architecture.md § 8, "The broker template").
import BusProtocol
import CProcessControl
import Foundation
import SQLite

/// The Swift runtime's type metadata of the serving loop's collections (the sessions by name and identity, the
/// ledger's entries and pending events, the timers, turns and open requests), made at first use by an
/// instantiation and a scan of the program's conformance records for its generic requirements. A day's broker makes
/// them as its first plugin connects and its first events go out; made in the template, the runtime's caches of them
/// are in every forked day.
///
/// Safe because it only names types and reserves room for one element in empty collections that it drops at once:
/// nothing is inserted or kept, no broker, socket, store or clock is made. Metadata is a fact of the program, the
/// same in every day; whatever a day's broker does, it still does itself.
public enum BrokerWarmUp {
    public static func run() {
        reserve([Envelope].self)
        reserve([PendingEvent].self)
        reserve([DeliveryStore.Key].self)
        reserve([DeliveryLedger.Entry].self)
        reserve([TimerQueue.Entry].self)
        reserve([TurnQueue.Waiting].self)
        reserve([OpenRequests.Request].self)
        reserve([ClientGrant].self)
        reserve([MessageKind].self)
        reserve([UInt64].self)
        reserve([String?].self)
        reserve([Int?].self)
        reserve([[String]].self)
        reserve(Set<UInt64>.self)
        reserve(Set<Substring>.self)
        reserve([String: Session].self)
        reserve([[UInt8]: Session].self)
        reserve([String: LastSubscription].self)
        reserve([String: PendingEvents].self)
        reserve([DeliveryStore.Key: [UInt8]].self)
        reserve([String: [UInt8]].self)
        reserve([String: Bool].self)
        reserve([String: Int].self)
        reserve([[UInt8]: Int].self)
        let types: [Any.Type] = [
            Result<Admission.Admitted, BusProtocolError>.self, StateWatch?.self, BusProtocolError?.self, Envelope?.self,
        ]
        for type in types { shieldbus_keep(unsafeBitCast(type, to: UnsafeRawPointer.self)) }
    }

    /// A fresh delivery store, built once at a scratch name in `folder` and removed: each day's `bus.sqlite` is then
    /// written from its bytes (`StoreCreation.remember`), the same file SQLite would build. Thrown when it could not be: each
    /// day then builds its own.
    public static func rememberStores(in folder: String) throws {
        try StoreCreation.remember(pageSize: DeliveryStore.pageSize, schema: DeliveryStore.schema, in: folder)
    }

    private static func reserve<Element>(_: [Element].Type) {
        var array: [Element] = []
        array.reserveCapacity(1)
        array.withUnsafeBufferPointer { shieldbus_keep($0.baseAddress.map(UnsafeRawPointer.init)) }
    }

    private static func reserve<Element: Hashable>(_: Set<Element>.Type) {
        var set = Set<Element>()
        set.reserveCapacity(1)
        shieldbus_keep(UnsafeRawPointer(bitPattern: set.capacity))
    }

    /// A table's storage made, with room for one: the metadata the runtime makes at a table's first insertion (its
    /// key's `Hashable` conformance found by a scan of the program's conformance records). Other modules' warm-ups
    /// make their private tables' with it.
    public static func reserve<Key: Hashable, Value>(_: [Key: Value].Type) {
        var dictionary = [Key: Value]()
        dictionary.reserveCapacity(1)
        shieldbus_keep(UnsafeRawPointer(bitPattern: dictionary.capacity))
    }
}
