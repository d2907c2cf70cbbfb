// state-corrupter: test-only — on `app.test.corrupt-tokens` it overwrites the saved app tokens with bytes that do
// not decode, as an app update with a new format might (the Habit Doom write-up, lesson 4).

import Foundation
import ShieldBusSDK

final class StateCorrupter: BusPlugin {
    override var subscriptions: [String] { ["app.test.corrupt-tokens"] }

    override func handle(_ envelope: Envelope) {
        guard let group = CommandLine.arguments.dropFirst().first, let root = ProcessInfo.processInfo.environment["SHIELDBUS_STATE_DIR"] else { return }
        do {
            let container = AppGroupContainer(root: URL(fileURLWithPath: root + "/appgroups"))
            let admin = try SharedDefaults(suiteName: group, container: container, writer: SharedDefaults.administrator)
            _ = try admin.set("not base64 at all %%%", forKey: "globalSerializedTokens")
        } catch {
            PluginRuntime.current?.logger.error("could not corrupt: \(error)")
        }
    }
}

PluginHost.run { StateCorrupter() }
