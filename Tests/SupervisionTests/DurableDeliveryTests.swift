import AppGroupStore
import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// Durable delivery through the real broker and the real companion app: events a plugin's process was given
/// and did not acknowledge go to its next process, and the SDK handles each of them once.
final class DurableDeliveryTests: XCTestCase {
    let group = "group.dev.shieldbus.durable"

    /// The companion app alone, running the habit lock with more habits a day than the test completes.
    var configuration: String {
        """
        name: durable
        timeZone: UTC
        bus: {heartbeatMs: 200, sessionTimeoutMs: 2000}
        device: {companionApp: Habit Lock, companionPlugin: app}
        appGroups:
          - name: \(group)
            slices: {app: [isCurrentlyUnlocked, quotaEndTimestamp, "globalSerialized*", "habits.*", "DeepLinkInbox.*"]}
        plugins:
          - {name: app, executable: \(BuildProducts.path("companion-app")), role: app,
             options: {product: habit-lock, appGroup: \(group), habitsPerDay: 100000, unlockMinutes: 30}}
        """
    }

    func appEntry(_ broker: BrokerProcess) -> JSONValue? {
        (try? broker.status())?["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == "app" }
    }

    /// Every habit the app recorded, over all days (the run may cross midnight).
    func recordedHabits(_ defaults: SharedDefaults) throws -> [String] {
        try defaults.dictionaryRepresentation().keys.filter { $0.hasPrefix("habits.") }.sorted()
            .flatMap { try defaults.value([String].self, forKey: $0) ?? [] }
    }

    func testKillingTheAppInTheMiddleOfABurstOfHabitsLosesNone() throws {
        let broker = try BrokerProcess(configuration: configuration)
        waitUntil("the app to connect (log: \(broker.log(tail: 10)))") { appEntry(broker)?["connected"]?.boolValue == true }
        let firstPid = try XCTUnwrap(appEntry(broker)?["pid"]?.intValue)
        let container = AppGroupContainer(root: URL(fileURLWithPath: broker.runtime.path + "/state/appgroups"))
        let defaults = try SharedDefaults(suiteName: group, container: container)

        let tool = try broker.connect(name: "burst", role: .tool, subscriptions: [])
        let total = 1_500
        for n in 0..<total {
            try tool.publish(Publish(topic: "input.habit.request", body: ["habit": .string("habit-\(n)")], corr: "burst-\(n)"))
        }
        // SIGKILL while the app is working through the backlog: some recorded, many delivered or queued.
        waitUntil("the app to record some habits") { (try? recordedHabits(defaults).count ?? 0) ?? 0 >= 50 }
        kill(pid_t(firstPid), SIGKILL)
        let recordedAtKill = try recordedHabits(defaults).count
        XCTAssertLessThan(recordedAtKill, total, "the kill came in the middle of the burst")

        waitUntil("every habit to be recorded", timeoutSeconds: 60) { (try? recordedHabits(defaults).count) == total }
        let habits = try recordedHabits(defaults)
        XCTAssertEqual(habits.count, total, "none lost")
        XCTAssertEqual(Set(habits).count, habits.count, "none recorded twice")
        XCTAssertEqual(Set(habits), Set((0..<total).map { "habit-\($0)" }))
        let entry = try XCTUnwrap(appEntry(broker))
        XCTAssertEqual(entry["restarts"]?.intValue, 1)
        XCTAssertNotEqual(entry["pid"]?.intValue, firstPid)
        XCTAssertNil(try broker.status()["counters"]?["errorsByCode"]?["delivery-abandoned"], "nothing given up")
    }
}
