// fixture-memory-monitor: a monitor that counts its callbacks in memory only and says the count each time —
// under the ios-realistic profile its process ends after every callback, so the count never gets past 1. It counts
// them twice: in the extension's instance (`seen`) and in a global of the program (`process`), which a launch forked
// from the plugin's template must not inherit from an earlier launch either; `pid` is its pid inside its sandbox.
// It also says what tells a launch's start from the template's (LaunchTemplateWarmUpTests): `hash`, a fixed string's
// hash under this process's hashing seed, and `threadsAtMain`, its threads when its `main` began; and what the
// template's one-time library set-up leaves a launch: `highestDescriptorAtMain`, its highest open descriptor when its
// `main` began, and `librariesSetUpAtMain`, whether libzmq's libraries were set up by then (1, 0, -1 when it cannot be told).
// Each callback also prints a line to standard output (C stdio, buffered in a file): its log must hold it once the
// process has ended, however the launch ends.

import CProcessControl
import DeviceActivity
import FamilyControls
import Foundation
import ShieldBusSDK
import ZeroMQ

/// Callbacks handled by this process, whichever instance handled them.
var callbacksInThisProcess = 0

/// This process's threads as its `main` begins (top-level code runs in order, this before `PluginHost.run`), counted
/// as the template counts its own.
let threadsAtMain = Int64(shieldbus_thread_count())

/// This process's highest open descriptor as its `main` begins (-1 for none).
let highestDescriptorAtMain = Int64((0..<4096).last { fcntl(Int32($0), F_GETFD) != -1 } ?? -1)

/// Whether libzmq's libraries (OpenPGM's, libsodium's) were set up before `main`: only a template does that.
let librariesSetUpAtMain: Int64 = Context.librariesAreSetUp.map { $0 ? 1 : 0 } ?? -1

/// A fixed string's hash: the same in two processes only if they hash with the same seed.
func hashOfAFixedString() -> Int64 {
    var hasher = Hasher()
    hasher.combine("x")
    return Int64(hasher.finalize())
}

final class MemoryMonitor: DeviceActivityMonitor {
    var callbacksSeen = 0

    override func didStart() {
        let center = DeviceActivityCenter()
        _ = try? AuthorizationCenter.shared.requestAuthorization(for: .individual)  // no companion app in this test
        guard (try? center.monitoredActivities().isEmpty) == true else { return }
        for (index, hour) in [7, 8, 9].enumerated() {
            try? center.startMonitoring(DeviceActivityName("memory.\(index)"), during: DeviceActivitySchedule(
                intervalStart: DateComponents(hour: hour, minute: 0), intervalEnd: DateComponents(hour: hour, minute: 20), repeats: false))
        }
    }

    override func intervalDidStart(for activity: DeviceActivityName) {
        callbacksSeen += 1
        callbacksInThisProcess += 1
        print("memory callback \(activity.rawValue)")
        try? PluginRuntime.current?.publish("app.test.memory", json: [
            "seen": .int(Int64(callbacksSeen)), "process": .int(Int64(callbacksInThisProcess)), "pid": .int(Int64(getpid())),
            "hash": .int(hashOfAFixedString()), "threadsAtMain": .int(threadsAtMain),
            "highestDescriptorAtMain": .int(highestDescriptorAtMain), "librariesSetUpAtMain": .int(librariesSetUpAtMain),
        ])
    }
}

PluginHost.run { MemoryMonitor() }
