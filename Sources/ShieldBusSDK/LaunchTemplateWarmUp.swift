// LaunchTemplateWarmUp: what a plugin's launch template makes once, before it waits for launches, so that each launch
// forked from it finds it made (docs/architecture.md § 8, "The template's warm-up").
import AppGroupStore
import BusProtocol
import CProcessControl
import DeviceAPI
import Foundation
import Logging
import ScreenTime
import SQLite
import ZeroMQ

/// The Swift runtime's type metadata of the generic types every launch's path through the SDK makes first (the
/// storage of its arrays, sets and dictionaries, its optionals and tuples, its locked values, the replies of the OS
/// calls it reads): made at first use by
/// a look-up of the type's mangled name, the instantiation of its metadata and a scan of the program's conformance
/// records for the requirements of its generic parameters. Made in the template, the metadata and the program's cache
/// of each look-up are in every launch's memory as the fork copies it, so no launch makes them again.
///
/// What it may touch is narrow, because it runs in the template's C constructor (`CLaunchTemplate`), before `main`.
/// In a release program (static standard library) the constructors run in link order: swiftrt's
/// `swift_image_constructor` has registered the program's type and conformance records, which the look-ups scan, but
/// the runtime's other constructors (the one that draws the standard library's hashing seed among them), Swift
/// Concurrency's, Dispatch's, CoreFoundation's and libzmq's run after it, and each launch runs them itself. In a debug
/// build those live in shared libraries, whose constructors all ran before it (the seed is then drawn once, in the
/// template). So it only names types and reserves storage that it releases at once: no value is hashed, no global or
/// `static let` is made (a kept `Set` or `Dictionary` would be laid out with a seed other than the launch's), nothing
/// reads the environment, the clock or the time zone (a launch's own), no file is opened (but by the libraries' set-up,
/// which keeps none open), no thread started. No
/// Swift Concurrency standard type (one mangled `Sc…`, whose descriptor Concurrency's own constructor registers:
/// `Task`, `CheckedContinuation`, `AsyncStream`…; `TaskLocal` is not one) and no type whose metadata needs
/// CoreFoundation or Dispatch may be added: in a release program they are set up after this runs. Metadata is a fact
/// of the program, the same in every launch; whatever a launch's code does is still done in the launch. Besides the
/// metadata, it makes the C libraries' own one-time set-up (`setUpLibraries`), which reads the plugin's environment
/// only (the template's is the plugin's, as each launch's is) and keeps nothing open. The order is checked by
/// LaunchTemplateWarmUpTests, the set-up's traces (descriptors, threads) too.
package enum LaunchTemplateWarmUp {
    static func run() {
        setUpLibraries()
        reserveArrays()
        reserveSetsAndDictionaries()
        nameTypes()
        name(ShieldSettings.encodingContainerTypes + ManagedSettingsWrite.encodingContainerTypes
             + ShieldActionRequest.decodingContainerTypes + ShieldActionReply.encodingContainerTypes)
    }

    /// Makes each of `types`, given by a module that can name them (the keyed coding containers of a type whose
    /// coding keys are private): a look-up of a generic type checks its parameters' conformances, each unknown one a
    /// scan of every conformance record of the program, which the template then makes once for all its launches.
    package static func name(_ types: [Any.Type]) {
        for type in types { keep(unsafeBitCast(type, to: UnsafeRawPointer.self)) }
    }

    /// The C libraries' one-time set-up, which each launch's first store and first libzmq context would make:
    /// SQLite's (`SQLiteLibrary`), libsodium's and OpenPGM's (`Context.setUpLibraries`). C code only, run once: it
    /// opens no descriptor it keeps, starts no thread and draws no randomness a launch uses (each says what it leaves).
    private static func setUpLibraries() {
        SQLiteLibrary.setUp()
        Context.setUpLibraries()
    }

    /// The arrays' storage classes (`_ContiguousArrayStorage<Element>`), made by reserving room for one element.
    private static func reserveArrays() {
        reserve([SQLiteValue].self)
        reserve([Envelope].self)
        reserve([Publish].self)
        reserve([BusTable.RequestRoute].self)
        reserve([MessageKind].self)
        reserve([Role].self)
        reserve([JSONValue].self)
        reserve([(String, JSONValue)].self)
        reserve([(key: String, value: [String])].self)
        reserve([StoreChange].self)
        reserve([SliceClaim].self)
        reserve([Calendar.Component].self)
        reserve([String].self)
        reserve([Substring].self)
        reserve([[UInt8]].self)
        reserve([UInt8].self)
        reserve([Int].self)
        reserve([Int?].self)
        reserve([Int64].self)
        reserve([Bool].self)
        reserve([StaticString].self)
        reserve([UnsafeMutablePointer<Int8>].self)
        reserve([any CodingKey].self)
        reserve([StoredEntry].self)
        reserve([DeviceActivityName].self)
        reserve([DeviceActivityEvent.Name].self)
        reserve([Token<Application>].self)
        reserve([Token<WebDomain>].self)
        reserve([Token<ActivityCategory>].self)
        keep(UnsafeRawPointer(bitPattern: JSONObjectView.reserveMembers()))
    }

    /// Sets' and dictionaries' storage classes, made by reserving room for one element in an empty one: nothing
    /// inserted, so nothing hashed with a seed that is not the launch's.
    private static func reserveSetsAndDictionaries() {
        reserve(Set<Role>.self)
        reserve(Set<String>.self)
        reserve(Set<Calendar.Component>.self)
        // Foundation's own, made by a URL's first `path` (its percent-decoding's bytes), as a renderer's resources.
        reserve(Set<UInt8>.self)
        reserve([String: JSONValue].self)
        reserve([String: Statement].self)
        reserve([String: String].self)
        reserve([String: Int].self)
        reserve([DeviceActivityEvent.Name: DeviceActivityEvent].self)
        reserve([String: SharedDefaults].self)
        reserve([String: StoredEntry].self)
        reserve([String: [String]].self)
        reserve([String: Double].self)
        reserve([String: Any].self)
        reserve(Set<Token<Application>>.self)
        reserve(Set<Token<WebDomain>>.self)
        reserve(Set<Token<ActivityCategory>>.self)
    }

    /// Types a launch names but does not allocate storage of: optionals, tuples, the SDK's locked values.
    private static func nameTypes() {
        let types: [Any.Type] = [
            LockedValue<Bool>.self, LockedValue<String?>.self, LockedValue<PluginRuntime?>.self,
            LockedValue<[String: any Sendable]>.self, LockedValue<[(call: String, message: String)]>.self,
            (call: String, message: String).self, (String, JSONValue).self, (String, String).self,
            Welcome?.self, (Welcome?, Welcome?).self, BrokerMessage?.self, Envelope?.self, StoredEntry?.self,
            TransactionResult<StoreChange>.self, String?.self, Any?.self, (any Error).self, POSIXError?.self, BusProtocolError?.self,
            TaskLocal<PluginRuntime?>.self, [String].self, [UInt8].self, [String: Int].self, [String: Double].self,
            [DeviceActivityEvent.Name: DeviceActivityEvent].self, (any CodingKey).self,
            CodingUserInfoKey?.self, (CodingUserInfoKey, Any).self, (key: CodingUserInfoKey, value: Any).self,
            (CodingUserInfoKey, any Sendable).self, (key: CodingUserInfoKey, value: any Sendable).self,
            (Data.Iterator, Int).self, UnsafePointer<UnsafeMutableRawPointer?>.self,
            DeviceActivityEvent.Name?.self, (DeviceActivitySchedule, Bool).self,
            ShieldSettings.ActivityCategoryPolicy<Application>.self, ShieldSettings.ActivityCategoryPolicy<WebDomain>.self,
            ShieldSettings.ActivityCategoryPolicy<Application>?.self, ShieldSettings.ActivityCategoryPolicy<WebDomain>?.self,
            Set<Token<Application>>?.self, Set<Token<WebDomain>>?.self,
            LockedValue<[String: SharedDefaults]>.self, TransactionResult<Void>.self, Statement?.self, Logger.MetadataProvider?.self,
            DeviceActivityEvent?.self,
            // The replies of the OS calls the SDK makes (`PluginRuntime.call`), as it reads them: `DeviceReply<Value>`,
            // its optional value, and the optional and doubly optional reply a call's wait holds.
            DeviceReply<AuthorizationState>??.self, DeviceReply<PickerResult>??.self, DeviceReply<NoValue>??.self,
            DeviceReply<MonitoredActivities>??.self, DeviceReply<MonitoredEvents>??.self, DeviceReply<ManagedSettingsSnapshot>??.self,
        ]
        for type in types { keep(unsafeBitCast(type, to: UnsafeRawPointer.self)) }
    }

    @inline(__always)
    private static func reserve<Element>(_: [Element].Type) {
        var array: [Element] = []
        array.reserveCapacity(1)
        array.withUnsafeBufferPointer { keep($0.baseAddress.map(UnsafeRawPointer.init)) }
    }

    @inline(__always)
    private static func reserve<Element: Hashable>(_: Set<Element>.Type) {
        var set = Set<Element>()
        set.reserveCapacity(1)
        keep(UnsafeRawPointer(bitPattern: set.capacity))
    }

    @inline(__always)
    private static func reserve<Key: Hashable, Value>(_: [Key: Value].Type) {
        var dictionary = [Key: Value]()
        dictionary.reserveCapacity(1)
        keep(UnsafeRawPointer(bitPattern: dictionary.capacity))
    }

    /// An opaque use (a C function the optimiser cannot see into), so that each look-up and allocation is made.
    private static func keep(_ pointer: UnsafeRawPointer?) { shieldbus_keep(pointer) }
}

/// Called by the template's constructor (`CLaunchTemplate`) before it says it serves; a program without the SDK has
/// no such function and its template makes nothing.
@_cdecl("shieldbus_launch_template_warm_up")
func launchTemplateWarmUp() {
    LaunchTemplateWarmUp.run()
}
