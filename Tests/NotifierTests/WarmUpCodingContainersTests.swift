import DeviceAPI
import Foundation
@testable import MonitorKit
import ScreenTime
import XCTest

/// A launch template's warm-up names the keyed coding containers a launch's writes (and an action delegate's read of
/// its request) make whose keys are private
/// (ShieldBusSDK's `LaunchTemplateWarmUp`, MonitorKit's `MonitorKitWarmUp`): each list must hold every container the
/// type's encoding asks for, else that launch still scans the program's conformance records for it.
final class WarmUpCodingContainersTests: XCTestCase {
    func testShieldSettingsNamesEveryKeyedContainerItsEncodingMakes() throws {
        let settings = ShieldSettings(applications: [Token(rawValue: "app.a")], applicationCategories: .specific([Token(rawValue: "cat.a")]),
                                      webDomains: [Token(rawValue: "web.a")], webDomainCategories: .all(except: [Token(rawValue: "web.b")]))
        try assertNamed(settings, in: ShieldSettings.encodingContainerTypes, expecting: 2)
    }

    func testManagedSettingsWriteNamesItsOwnKeyedContainer() throws {
        let write = ManagedSettingsWrite(store: "default", shield: ShieldSettings(applications: [Token(rawValue: "app.a")]))
        // Its own keys; the shield's are ShieldSettings' (named there).
        try assertNamed(write, in: ManagedSettingsWrite.encodingContainerTypes + ShieldSettings.encodingContainerTypes, expecting: 2)
    }

    func testTheCheckChainNamesTheKeyedContainersOfWhatItStores() throws {
        let types = CheckChain.encodingContainerTypes
        try assertNamed(CheckChain.PlannedChecks(plannedAt: 1_000, times: ["1060": 1]), in: types, expecting: 1)
        try assertNamed([CheckChain.PlannedCall(at: 1_060, activity: "monitor.reblock_0")], in: types, expecting: 1)
    }

    func testAShieldActionsReplyNamesItsOwnKeyedContainer() throws {
        try assertNamed(ShieldActionReply(response: .defer), in: ShieldActionReply.encodingContainerTypes, expecting: 1)
    }

    func testAShieldActionsRequestNamesTheKeyedContainerItsDecodingAsksFor() throws {
        let recorder = KeyedDecodingContainerRecorder()
        XCTAssertThrowsError(try ShieldActionRequest(from: recorder))
        let named = Set(ShieldActionRequest.decodingContainerTypes.map(ObjectIdentifier.init))
        XCTAssertEqual(recorder.made.map(\.name), ["KeyedDecodingContainer<CodingKeys>"])
        XCTAssertTrue(recorder.made.allSatisfy { named.contains($0.type) }, "\(recorder.made.map(\.name)) is not named for the warm-up")
        // The recorder refuses the top-level container, so a field's own keyed container is asked here, field by field
        // (each of a full request's, found by reflection so that a new field is judged too): none may ask for one the
        // warm-up does not name. Today each field is a single value (a raw-value enum, a token).
        let request = ShieldActionRequest(action: .primaryButtonPressed, entryPoint: .application, application: Token(rawValue: "app.a"),
                                          webDomain: Token(rawValue: "web.a"), category: Token(rawValue: "cat.a"))
        let fields = Mirror(reflecting: request).children
        XCTAssertEqual(fields.count, 5)
        var unwrapped = 0
        for field in fields {
            // An optional field's own type: `Optional`'s decoding asks for a single value first, which the recorder
            // refuses before the wrapped type's decoding would ask for anything.
            let declared = Swift.type(of: field.value)
            let judged = (declared as? any OptionalField.Type)?.wrapped ?? declared
            if ObjectIdentifier(judged) != ObjectIdentifier(declared) { unwrapped += 1 }
            let type = try XCTUnwrap(judged as? Decodable.Type, "\(field.label ?? "?") is decoded")
            let fieldRecorder = KeyedDecodingContainerRecorder()
            XCTAssertThrowsError(try type.init(from: fieldRecorder))
            XCTAssertTrue(fieldRecorder.made.allSatisfy { named.contains($0.type) },
                          "\(field.label ?? "?"): \(fieldRecorder.made.map(\.name)) is not named for the warm-up")
        }
        XCTAssertEqual(unwrapped, 3, "the three tokens judged by their own decoding")
    }

    /// Encodes `value` and checks that each keyed container asked for is among `named`, and that `count` kinds were.
    private func assertNamed<T: Encodable>(_ value: T, in named: [Any.Type], expecting count: Int, line: UInt = #line) throws {
        let recorder = KeyedContainerRecorder()
        try value.encode(to: recorder)
        let names = Set(named.map(ObjectIdentifier.init))
        XCTAssertEqual(recorder.made.count, count, "the keyed containers the encoding made: \(recorder.made.values)", line: line)
        for (made, type) in recorder.made {
            XCTAssertTrue(names.contains(made), "\(type) is not named for the warm-up", line: line)
        }
    }
}

/// The type an `Optional` wraps.
private protocol OptionalField {
    static var wrapped: Any.Type { get }
}

extension Optional: OptionalField {
    static var wrapped: Any.Type { Wrapped.self }
}

/// A `Decoder` that records the keyed container its value asks for first, and refuses it: the container's own type is
/// what the warm-up must name (the values inside are the standard types' own or named elsewhere).
private final class KeyedDecodingContainerRecorder: Decoder {
    struct Refused: Error {}
    var made: [(type: ObjectIdentifier, name: String)] = []
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        made.append((ObjectIdentifier(KeyedDecodingContainer<Key>.self), "\(KeyedDecodingContainer<Key>.self)"))
        throw Refused()
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Refused() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw Refused() }
}

/// An `Encoder` that encodes nothing but records the type of every keyed container asked for with keys of the
/// program's own, nested values' included.
private final class KeyedContainerRecorder: Encoder {
    var made: [ObjectIdentifier: String] = [:]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        // Not the standard library's own (a dictionary's keys), which no warm-up can name.
        if !String(reflecting: Key.self).hasPrefix("Swift.") {
            made[ObjectIdentifier(KeyedEncodingContainer<Key>.self)] = "\(KeyedEncodingContainer<Key>.self)"
        }
        return KeyedEncodingContainer(Keyed(recorder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { Unkeyed(recorder: self) }
    func singleValueContainer() -> any SingleValueEncodingContainer { Single(recorder: self) }

    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let recorder: KeyedContainerRecorder
        var codingPath: [any CodingKey] { [] }
        mutating func encodeNil(forKey key: Key) throws {}
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try value.encode(to: recorder) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            recorder.container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Unkeyed(recorder: recorder) }
        mutating func superEncoder() -> any Encoder { recorder }
        mutating func superEncoder(forKey key: Key) -> any Encoder { recorder }
    }

    private struct Unkeyed: UnkeyedEncodingContainer {
        let recorder: KeyedContainerRecorder
        var codingPath: [any CodingKey] { [] }
        var count: Int { 0 }
        mutating func encodeNil() throws {}
        mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: recorder) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            recorder.container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
        mutating func superEncoder() -> any Encoder { recorder }
    }

    /// Where a value's coding ends: the standard types' own values (each encodes itself into a single value).
    private struct Single: SingleValueEncodingContainer {
        let recorder: KeyedContainerRecorder
        var codingPath: [any CodingKey] { [] }
        mutating func encodeNil() throws {}
        mutating func encode(_ value: Bool) throws {}
        mutating func encode(_ value: String) throws {}
        mutating func encode(_ value: Double) throws {}
        mutating func encode(_ value: Float) throws {}
        mutating func encode(_ value: Int) throws {}
        mutating func encode(_ value: Int8) throws {}
        mutating func encode(_ value: Int16) throws {}
        mutating func encode(_ value: Int32) throws {}
        mutating func encode(_ value: Int64) throws {}
        mutating func encode(_ value: UInt) throws {}
        mutating func encode(_ value: UInt8) throws {}
        mutating func encode(_ value: UInt16) throws {}
        mutating func encode(_ value: UInt32) throws {}
        mutating func encode(_ value: UInt64) throws {}
        mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: recorder) }
    }
}
