import AppGroupStore
import BusProtocol
import DeviceAPI
import Foundation

/// `UserDefaults`, as extension code uses it, on the device's App Groups. A plugin module says once
/// `typealias UserDefaults = AppGroupUserDefaults` (the line `shieldbus plugin new` writes in `main.swift`): a
/// declaration of the module's own wins over Foundation's, so every `UserDefaults(suiteName:)` of its files is this.
///
/// - `UserDefaults(suiteName:)` with the plugin's App Group (its configuration's `appGroup:`) is that group's
///   store: crash-safe (SQLite), each write announced as `state.changed`, seen by `shieldbus state list` and the
///   Studio, read at once by every other process (no `synchronize()` needed). Any other name gives nil, as iOS
///   gives for a group the app is not entitled to — and the refusal is reported on the bus.
/// - `UserDefaults.standard` is private to the plugin, in its container inside the run's state folder.
/// - Values are property-list values, as on iOS: strings, numbers, Bool, Date, Data, URL, and arrays and
///   dictionaries of them. Anything else is refused and reported (iOS raises an exception).
/// - Every process of the group may write every key, as on iOS; each key keeps its last writer and version, and a
///   key written by a second plugin is reported (`state.multiple-writers`) unless the group declares it `shared:`.
///   A group with `strictSlices: true` refuses writes outside the writer's slice instead.
///
/// A write that cannot be stored (a full or read-only disk) is reported as `state.write-failed`, never dropped silently.
public final class AppGroupUserDefaults: @unchecked Sendable {
    private let store: SharedDefaults
    private let shared: [String]
    private let isGroup: Bool
    private var registered: [String: Any] = [:]
    private let lock = NSLock()

    /// The group's store, or nil (reported) when the plugin's product has no such App Group.
    public convenience init?(suiteName: String?) {
        guard let suiteName else {
            guard let standard = try? AppGroupUserDefaults.openStandard() else { return nil }
            self.init(store: standard, shared: [], isGroup: false)
            return
        }
        guard let store = AppGroupUserDefaults.openGroup(suiteName) else { return nil }
        self.init(store: store, shared: AppGroupUserDefaults.sharedPatterns, isGroup: true)
    }

    private init(store: SharedDefaults, shared: [String], isGroup: Bool) {
        self.store = store
        self.shared = shared
        self.isGroup = isGroup
    }

    /// The plugin's own defaults (`UserDefaults()`, as `standard`).
    public convenience init() { self.init(store: AppGroupUserDefaults.standard.store, shared: [], isGroup: false) }

    /// The value for a key (`value(forKey:)`, key-value coding's form of `object(forKey:)`).
    public func value(forKey key: String) -> Any? { object(forKey: key) }
    /// Stores a value (`setValue(_:forKey:)`).
    public func setValue(_ value: Any?, forKey key: String) { set(value, forKey: key) }

    /// The plugin's own defaults, in its container (never `$HOME`): opened once per container, so each plugin hosted
    /// in a test's process (`InProcessPlugin`) has its own, as each process has.
    public static var standard: AppGroupUserDefaults {
        guard let container = try? PluginContainer.path() else {
            fatalError("UserDefaults.standard cannot be opened: this process is not a plugin started by the broker (no SHIELDBUS_STATE_DIR and SHIELDBUS_PLUGIN_NAME)")
        }
        return openedStandards.withValue { opened in
            if let standard = opened[container] { return standard }
            guard let standard = AppGroupUserDefaults(suiteName: nil) else {
                fatalError("UserDefaults.standard cannot be opened in \(container)")
            }
            opened[container] = standard
            return standard
        }
    }

    private static let openedStandards = LockedValue<[String: AppGroupUserDefaults]>([:])

    // MARK: Reading

    /// The stored value, or the registered default (`object(forKey:)`).
    public func object(forKey key: String) -> Any? {
        let entry: StoredEntry?
        do {
            entry = try store.entry(forKey: key)
        } catch {
            SilentCall.reportFailure("UserDefaults(suiteName: \(store.suiteName)).object(forKey: \(key))", "\(error)")
            entry = nil
        }
        if let entry {
            if let value = PropertyListCoding.value(of: entry) { return value }
            SilentCall.reportFailure("UserDefaults(suiteName: \(store.suiteName)).object(forKey: \(key))",
                                     "the stored \(entry.typeTag) does not read as a property-list value: \(entry.rawJSON.prefix(80))")
        }
        lock.lock()
        defer { lock.unlock() }
        return registered[key]
    }

    public func string(forKey key: String) -> String? {
        switch object(forKey: key) {
        case let string as String: return string
        case let value?: return PropertyListCoding.Scalar(value).map { "\($0.object)" }
        default: return nil
        }
    }
    public func array(forKey key: String) -> [Any]? { object(forKey: key) as? [Any] }
    public func dictionary(forKey key: String) -> [String: Any]? { object(forKey: key) as? [String: Any] }
    public func data(forKey key: String) -> Data? { object(forKey: key) as? Data }
    public func stringArray(forKey key: String) -> [String]? { object(forKey: key) as? [String] }
    public func integer(forKey key: String) -> Int {
        switch object(forKey: key) {
        case let string as String: return Int(string) ?? Double(string).map { Int($0) } ?? 0
        case let value?: return PropertyListCoding.Scalar(value)?.object.intValue ?? 0
        default: return 0
        }
    }
    public func double(forKey key: String) -> Double {
        switch object(forKey: key) {
        case let string as String: return Double(string) ?? 0
        case let date as Date: return date.timeIntervalSinceReferenceDate
        case let value?: return PropertyListCoding.Scalar(value)?.object.doubleValue ?? 0
        default: return 0
        }
    }
    public func float(forKey key: String) -> Float { Float(double(forKey: key)) }
    public func bool(forKey key: String) -> Bool {
        switch object(forKey: key) {
        case let string as String: return ["yes", "true", "1"].contains(string.lowercased())
        case let value?: return PropertyListCoding.Scalar(value)?.object.boolValue ?? false
        default: return false
        }
    }
    public func url(forKey key: String) -> URL? {
        switch object(forKey: key) {
        case let url as URL: return url
        case let string as String: return URL(string: string)
        default: return nil
        }
    }

    /// Every stored value with the registered defaults under them (`dictionaryRepresentation()`).
    public func dictionaryRepresentation() -> [String: Any] {
        lock.lock()
        var result = registered
        lock.unlock()
        do {
            for (key, entry) in try store.dictionaryRepresentation() { result[key] = PropertyListCoding.value(of: entry) }
        } catch {
            SilentCall.reportFailure("UserDefaults(suiteName: \(store.suiteName)).dictionaryRepresentation()", "\(error)")
        }
        return result
    }

    /// Values read when nothing is stored (`register(defaults:)`): in memory only, as on iOS.
    public func register(defaults: [String: Any]) {
        lock.lock()
        registered.merge(defaults) { _, new in new }
        lock.unlock()
    }

    // MARK: Writing

    /// Stores a property-list value, or removes the key for nil (`set(_:forKey:)`).
    public func set(_ value: Any?, forKey key: String) {
        guard let value, !(value is NSNull) else { return removeObject(forKey: key) }
        write(key) { store, key in
            guard let change = try PropertyListCoding.store(value, forKey: key, in: store) else {
                throw PropertyListCoding.Failure(description: "\(type(of: value)) is not a property-list value: store strings, numbers, Bool, Date, Data, URL, or arrays and dictionaries of them")
            }
            return change
        }
    }
    public func set(_ value: Int, forKey key: String) { set(value as Any?, forKey: key) }
    public func set(_ value: Double, forKey key: String) { set(value as Any?, forKey: key) }
    public func set(_ value: Float, forKey key: String) { set(Double(value) as Any?, forKey: key) }
    public func set(_ value: Bool, forKey key: String) { set(value as Any?, forKey: key) }
    public func set(_ url: URL?, forKey key: String) { set(url?.absoluteString as Any?, forKey: key) }

    /// Removes the key (`removeObject(forKey:)`).
    public func removeObject(forKey key: String) {
        write(key) { store, key in try store.removeObject(forKey: key) }
    }

    /// Writes reach the store at once: always true (`synchronize()`).
    @discardableResult
    public func synchronize() -> Bool { true }

    private func write(_ key: String, _ body: (SharedDefaults, String) throws -> StoreChange?) {
        do {
            let previous = try store.entry(forKey: key)?.writer
            guard let change = try body(store, key) else { return }
            if isGroup, let previous, previous != change.writer, previous != SharedDefaults.administrator,
               !shared.contains(where: { SharedDefaults.pattern($0, matches: key) }) {
                SharedWriteReport.multipleWriters(group: store.suiteName, key: key, previous: previous, writer: change.writer)
            }
        } catch let error as PropertyListCoding.Failure {
            SilentCall.reportFailure("UserDefaults(suiteName: \(store.suiteName)).set(_:forKey: \(key))", error.description)
        } catch let error as AppGroupStoreError where error.isSliceRefusal {
            SilentCall.reportFailure("UserDefaults(suiteName: \(store.suiteName)).set(_:forKey: \(key))", "\(error) (the group has strictSlices: true)")
        } catch {
            PluginRuntime.current?.reportWriteFailure("\(key) in \(store.suiteName)", error)
                ?? FileHandle.standardError.write(Data("cannot write \(key) in \(store.suiteName): \(error)\n".utf8))
        }
    }

    // MARK: Opening

    /// Key patterns of the plugin's group that several plugins write by design (the group's `shared:`).
    static var sharedPatterns: [String] {
        (LaunchEnvironment["SHIELDBUS_APP_GROUP_SHARED"] ?? "").split(separator: ",").map(String.init)
    }

    private static func openGroup(_ name: String) -> SharedDefaults? {
        guard PluginAppGroup.isEntitled(to: name) else {
            SilentCall.reportFailure("UserDefaults(suiteName: \"\(name)\")", "nil: \(PluginAppGroup.notEntitled(name))")
            return nil
        }
        do {
            let strict = LaunchEnvironment["SHIELDBUS_APP_GROUP_STRICT"] == "1"
            return try SharedDefaults.forPlugin(suiteName: name, slices: strict ? .strict : .open)
        } catch {
            SilentCall.reportFailure("UserDefaults(suiteName: \"\(name)\")", "nil: \(error)")
            return nil
        }
    }

    private static func openStandard() throws -> SharedDefaults {
        let container = try PluginContainer.path()
        let preferences = container + "/Library/Preferences"
        try FileManager.default.createDirectory(atPath: preferences, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let groups = AppGroupContainer(rootPath: preferences, layout: .flat)
        StoreReports.restartLoss(try groups.createGroup("standard"), openedBy: "UserDefaults.standard")
        let writer = LaunchEnvironment["SHIELDBUS_PLUGIN_NAME"] ?? "plugin"
        let standard = try SharedDefaults(suiteName: "standard", container: groups, writer: writer, slices: .open, clock: { BusClock.now })
        standard.onNoteFailure = { StoreReports.noteFailed($0) }
        return standard
    }
}

/// The plugin's own container folder (`<state>/containers/<plugin>`), where `UserDefaults.standard` and `$HOME` are.
enum PluginContainer {
    static func path() throws -> String {
        guard let state = LaunchEnvironment["SHIELDBUS_STATE_DIR"], let name = LaunchEnvironment["SHIELDBUS_PLUGIN_NAME"] else {
            throw PluginError.configuration("SHIELDBUS_STATE_DIR and SHIELDBUS_PLUGIN_NAME are not set: the broker sets them for the plugins it starts")
        }
        return state + "/containers/" + name
    }
}

/// A key that a second plugin wrote: iOS allows it, and it is often how an app and its extensions share a session —
/// or how one clobbers another's state. Reported so that it is seen; a group's `shared:` names the keys meant so.
enum SharedWriteReport {
    static func multipleWriters(group: String, key: String, previous: String, writer: String) {
        guard let runtime = PluginRuntime.current else { return }
        runtime.logger.notice("\(key) in \(group) was written by \(previous) and now by \(writer) (declare it under the group's `shared:` if that is meant)")
        try? runtime.publish(DeviceTopic.multipleWriters, json: ["group": .string(group), "key": .string(key),
                                                              "writers": .array([.string(previous), .string(writer)])])
    }
}

extension FileManager {
    /// The App Group's folder (`containerURL(forSecurityApplicationGroupIdentifier:)`): one of the plugin's own groups
    /// only; nil (reported) for any other, as iOS gives for a group the app is not entitled to.
    public func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? {
        let call = "FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: \"\(groupIdentifier)\")"
        guard PluginAppGroup.isEntitled(to: groupIdentifier) else {
            SilentCall.reportFailure(call, "nil: \(PluginAppGroup.notEntitled(groupIdentifier))")
            return nil
        }
        do {
            let groups = try PluginAppGroup.container(), folder = try groups.groupFolder(groupIdentifier)
            // The broker makes every declared group's folder; a name it did not declare has none.
            guard fileExists(atPath: folder) else { throw AppGroupStoreError.unknownSuite(name: groupIdentifier, existing: try groups.groups()) }
            return URL(fileURLWithPath: folder, isDirectory: true)
        } catch {
            SilentCall.reportFailure(call, "nil: \(error)")
            return nil
        }
    }
}
