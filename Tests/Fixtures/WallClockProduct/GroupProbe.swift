// App-Group probes written as iOS code is: `UserDefaults(suiteName:)` with the product's group and another,
// property-list values of every kind, `UserDefaults.standard`, `containerURL`, and a key that two plugins write.
import Foundation
import ShieldBusSDK

/// The app: writes and reads back each kind of value, and tells what it found on `x.app.probe`.
final class GroupProbeApp: App {
    override func didStart() {
        var failures: [String] = []
        func check(_ ok: Bool, _ what: String) { if !ok { failures.append(what) } }

        check(UserDefaults(suiteName: "group.com.example.other") == nil, "another group is nil")
        guard let defaults = UserDefaults(suiteName: NightMonitor.group) else {
            return report(["the product's group opened"])
        }
        let instant = Date(timeIntervalSince1970: 1_795_000_000.5)
        defaults.set("app", forKey: "session")
        defaults.set(42, forKey: "count")
        defaults.set(2.5, forKey: "ratio")
        defaults.set(true, forKey: "flag")
        defaults.set(instant, forKey: "since")
        defaults.set(Data([1, 2, 3]), forKey: "blob")
        defaults.set(["a", "b"], forKey: "list")
        defaults.set(["at": instant, "n": 1, "tags": ["x"]] as [String: Any], forKey: "tree")
        defaults.set(NSObject(), forKey: "object")  // no property-list value: refused and reported
        check(defaults.string(forKey: "session") == "app", "a string")
        check(defaults.integer(forKey: "count") == 42 && defaults.double(forKey: "count") == 42, "an integer")
        check(defaults.double(forKey: "ratio") == 2.5, "a double")
        check(defaults.bool(forKey: "flag"), "a Bool")
        check(defaults.object(forKey: "since") as? Date == instant, "a Date")
        check(defaults.data(forKey: "blob") == Data([1, 2, 3]), "Data")
        check(defaults.stringArray(forKey: "list") == ["a", "b"], "an array")
        let tree = defaults.dictionary(forKey: "tree")
        check(tree?["at"] as? Date == instant && tree?["n"] as? Int == 1 && tree?["tags"] as? [String] == ["x"], "a dictionary")
        check(defaults.object(forKey: "object") == nil, "no value for a refused one")
        defaults.register(defaults: ["fallback": "registered"])
        check(defaults.string(forKey: "fallback") == "registered", "a registered default")
        defaults.removeObject(forKey: "count")
        check(defaults.object(forKey: "count") == nil && defaults.integer(forKey: "count") == 0, "a removed key")
        check(defaults.synchronize(), "synchronize")

        UserDefaults.standard.set("mine", forKey: "launch")
        check(UserDefaults.standard.string(forKey: "launch") == "mine", "the standard defaults")
        check(defaults.string(forKey: "launch") == nil, "the standard defaults are not the group")
        let home = ProcessInfo.processInfo.environment["HOME"] ?? ""
        check(home.hasSuffix("/containers/app"), "HOME is the plugin's container, not \(home)")
        let folder = FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: NightMonitor.group)
        check(folder.map { FileManager.default.fileExists(atPath: $0.path) } == true, "the group's container folder")
        check(FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: "group.com.example.other") == nil, "no folder of another group")
        report(failures)
    }

    private func report(_ failures: [String]) {
        try? PluginRuntime.current?.publish("x.app.probe", json: ["failures": .array(failures.map { .string($0) })])
    }
}

/// Another plugin of the product: writes the app's key, as a monitor ending the app's session does.
final class GroupProbeWriter: BusPlugin {
    override func didStart() {
        UserDefaults(suiteName: NightMonitor.group)?.set("writer", forKey: "session")
        try? PluginRuntime.current?.publish("x.writer.done", json: ["session": .string(UserDefaults(suiteName: NightMonitor.group)?.string(forKey: "session") ?? "")])
    }
}
