// `shieldbus state`: the device's App-Group stores from the command line — list, get, set (as the administrator) and watch.
import AppGroupStore
import ArgumentParser
import BusProtocol
import Foundation

extension ShieldBus {
    struct State: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "state",
            abstract: "Inspect and change the App-Group stores: list keys, get and set values, watch changes.",
            discussion: """
            The stores are the ones the broker keeps in <state dir>/appgroups (default state dir: <runtime dir>/state). \
            They are read directly, so they can be inspected with or without a running broker.

            Examples:
              shieldbus state list
              shieldbus state get quotaEndTimestamp --group group.dev.shieldbus.habitlock
              shieldbus state set unlockMinutes 30
              shieldbus state set blockedApps '["Instagram","TikTok"]'
              shieldbus state watch --json
            """,
            subcommands: [ListKeys.self, GetValue.self, SetValue.self, WatchChanges.self]
        )
    }
}

/// What every `state` subcommand takes.
struct StateOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The app group (default: every group for list and watch, the only group for get and set).", valueName: "name"))
    var group: String?

    @Option(name: .long, help: ArgumentHelp("The device's state folder (default: the one the runtime directory's last broker used, else <runtime dir>/state).", valueName: "dir"))
    var stateDir: String?

    @Flag(name: .long, help: "Print JSON (one object; for watch, one object per line).")
    var json = false

    @OptionGroup var bus: BusOptions

    var stores: AppGroupStores { AppGroupStores(stateDirectory: stateDir, runtimeDirectory: bus.runtimeDir) }
}

/// Writes a line to standard output at once (a pipe would otherwise hold it back until the command ends).
func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

extension ShieldBus.State {
    struct ListKeys: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the keys with their type, version, writer and time.")
        @OptionGroup var options: StateOptions

        func run() throws {
            bootstrapLogging(options.bus.logLevel, default: .warning)
            let stores = options.stores
            var groups: [JSONValue] = []
            for group in try stores.groups(named: options.group) {
                let store = try stores.open(group)
                let entries = try store.dictionaryRepresentation().values.sorted { $0.key < $1.key }
                let writers = try store.writersByKey()
                if options.json {
                    groups.append(["group": .string(group), "entries": .array(entries.map { entry in
                        guard case .object(var fields) = StateRendering.json(entry) else { return StateRendering.json(entry) }
                        fields["writers"] = .array((writers[entry.key] ?? [entry.writer]).map { .string($0) })
                        return .object(fields)
                    })])
                } else {
                    StateRendering.table(group: group, entries: entries, writers: writers, in: stores.deviceTimeZone).forEach(printLine)
                }
            }
            if options.json { printLine(JSONValue.object(["groups": .array(groups)]).jsonText) }
        }
    }

    struct GetValue: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Print a key's value (JSON); with --json, also its type, version, writer and time.")
        @OptionGroup var options: StateOptions
        @Argument(help: "The key.") var key: String

        func run() throws {
            bootstrapLogging(options.bus.logLevel, default: .warning)
            let group = try options.stores.group(named: options.group)
            let defaults = try options.stores.open(group)
            guard let entry = try defaults.entry(forKey: key) else {
                let keys = try defaults.allKeys
                throw CommandFailure("app group '\(group)' has no value for '\(key)' (keys: \(keys.isEmpty ? "none" : keys.joined(separator: ", ")))")
            }
            printLine(options.json ? StateRendering.json(entry).jsonText : entry.rawJSON)
        }
    }

    struct SetValue: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set a key's value as the administrator (`shieldbus`), and announce it on the bus.",
            discussion: """
            The administrator may write any key, whatever the slices say. When a broker runs, the change is stamped \
            with bus time and announced as `state.changed`, exactly like a plugin's write.
            """
        )
        @OptionGroup var options: StateOptions
        @Argument(help: "The key.") var key: String
        @Argument(help: "The value, as JSON: 30, true, '\"text\"', '[\"a\",\"b\"]', '{\"a\":1}'.") var value: String

        func run() throws {
            bootstrapLogging(options.bus.logLevel, default: .warning)
            let parsed: JSONValue
            do {
                parsed = try JSONValue(parsing: value)
            } catch {
                throw CommandFailure("the value must be JSON (quote text for the shell: '\"\(value)\"'): \(error)")
            }
            let group = try options.stores.group(named: options.group)
            let announcer = try StateAnnouncer(runtimeDir: options.bus.runtimeDir)
            let clock: () -> Date = announcer.map { announcer in { announcer.busTime } } ?? Date.init
            let defaults = try options.stores.open(group, writer: SharedDefaults.administrator, clock: clock)
            let change = try store(parsed, in: defaults)
            let announced = try announcer.map { "announced as state.changed #\(try $0.announce(change))" } ?? "no broker running, so not announced"
            if options.json {
                printLine(StateRendering.json(change, now: try defaults.entry(forKey: key)).jsonText)
            } else {
                printLine("set \(key) in \(group) (version \(change.version)); \(announced)")
            }
        }

        /// Stores scalars as their Swift types (the tags plugins' own writes carry), anything else as `JSON`.
        private func store(_ parsed: JSONValue, in defaults: SharedDefaults) throws -> StoreChange {
            switch parsed {
            case .string(let string): return try defaults.set(string, forKey: key)
            case .int(let int): return try defaults.set(Int(int), forKey: key)
            case .double(let double): return try defaults.set(double, forKey: key)
            case .bool(let bool): return try defaults.set(bool, forKey: key)
            default: return try defaults.set(JSON(value: parsed), forKey: key)
            }
        }
    }

    struct WatchChanges: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "watch",
            abstract: "Print changes as they are committed, from the stores' change logs, until Ctrl-C.",
            discussion: "Each line: time, group, key, version, writer, and the value written (or `removed`)."
        )
        @OptionGroup var options: StateOptions
        @Option(name: .long, help: ArgumentHelp("Stop after this many changes.", valueName: "n")) var count: Int?
        @Option(name: .long, help: ArgumentHelp("How often to look for changes, in milliseconds.", valueName: "ms")) var intervalMs: Int = 100

        func run() throws {
            bootstrapLogging(options.bus.logLevel, default: .warning)
            guard intervalMs > 0 else { throw ValidationError("--interval-ms must be positive") }
            let stores = options.stores
            var logs = try stores.groups(named: options.group).map { try ChangeFollower(defaults: stores.open($0)) }
            let zone = stores.deviceTimeZone
            printError("watching \(logs.map(\.defaults.suiteName).joined(separator: ", ")) in \(stores.container.rootPath); Ctrl-C to stop")
            var seen = 0
            while count.map({ seen < $0 }) ?? true {
                var quiet = true
                for index in logs.indices {
                    for change in try logs[index].next() {
                        quiet = false
                        let entry = try logs[index].defaults.entry(forKey: change.key)
                        printLine(options.json ? StateRendering.json(change, now: entry).jsonText : StateRendering.line(change, now: entry, in: zone))
                        seen += 1
                        if count == seen { return }
                    }
                }
                if quiet { usleep(useconds_t(intervalMs) * 1000) }  // a CLI polls the change log; the bus is for plugins
            }
        }
    }
}

/// Follows one group's change log from now on: each call returns what was committed since the last.
struct ChangeFollower {
    let defaults: SharedDefaults
    private var last: Int64

    init(defaults: SharedDefaults) throws {
        self.defaults = defaults
        last = try defaults.lastChangeNumber()
    }

    mutating func next() throws -> [StoreChange] {
        let changes = try defaults.changes(after: last)
        last = changes.last?.sequence ?? last
        return changes
    }
}
