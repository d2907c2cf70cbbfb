import BusProtocol
import Configuration
@testable import DeviceOS
import DeviceAPI
import Foundation
import ScreenTime
import ShieldBusTestSupport
import SQLite
import XCTest

/// The device OS saves a ManagedSettings write in device.sqlite as it applies it; the broker journals the batch that
/// says so, then saves the batch in bus.sqlite. A broker killed between the two (and resumed) cuts the journal back
/// to the save, and before the fix the write made again "changed nothing" and said nothing: the device held a shield
/// the journal never showed.
extension FaultTests {
    /// What device.sqlite's ManagedSettings stores hold now (a killed broker's state folder).
    func storesHeld(_ state: String) throws -> [String: ShieldSettings] {
        let connection = try SQLiteConnection(path: state + "/device.sqlite", flags: [.readOnly])
        let statement = try connection.prepare("SELECT json FROM state WHERE key = 'managedsettings.stores'")
        guard try statement.step(), let json = try statement.string(at: 0) else { return [:] }
        return try DeviceAPICoding.decode([String: ShieldSettings].self, from: Array(json.utf8))
    }

    /// The stores as the journal tells them: each store's last `managedsettings.changed` (empty ones left out).
    func storesTold(_ journal: some Sequence<Envelope>) throws -> [String: ShieldSettings] {
        var stores: [String: ShieldSettings] = [:]
        for envelope in journal where envelope.topic == DeviceTopic.settingsChanged && envelope.source == "broker" {
            let change = try DeviceAPICoding.decode(ManagedSettingsChanged.self, from: envelope.body)
            stores[change.store] = change.shield.isEmpty ? nil : change.shield
        }
        return stores
    }

    /// Stores with each token replaced by what it names, in whichever epoch it was issued: an iOS update changes
    /// every token, and the OS carries its stores over (as the checker reads them across `device.os-updated`).
    func meaning(_ stores: [String: ShieldSettings], seed: UInt64, catalog: AppCatalog) throws -> [String: ShieldSettings] {
        var names: [String: String] = [:]
        for epoch in 0..<8 {
            let issuer = TokenIssuer(seed: seed, epoch: epoch)
            for app in catalog.apps { names[issuer.application(app.bundleIdentifier).rawValue] = "app:" + app.bundleIdentifier }
            for category in catalog.categories { names[issuer.category(category.id).rawValue] = "category:" + category.id }
            for domain in catalog.webDomains { names[issuer.webDomain(domain.domain).rawValue] = "domain:" + domain.domain }
        }
        return try stores.mapValues { shield in
            var text = String(decoding: DeviceAPICoding.encode(shield), as: UTF8.self)
            for (token, name) in names where text.contains(token) { text = text.replacingOccurrences(of: token, with: name) }
            return try DeviceAPICoding.decode(ShieldSettings.self, from: Array(text.utf8))
        }
    }

    /// The broker killed (a real SIGKILL, by itself) just before or just after saving the batch with one of the
    /// day's ManagedSettings writes, and resumed: seeded heavy days (faithful) × both sides of the save × a seeded
    /// write of the day. Before any plugin acts in the resumed run, the journal tells each store as the killed
    /// broker's device.sqlite held it; at the end, as the device holds it; and the lock invariant's verdict is the
    /// uncrashed day's.
    func testABrokerKilledAtAShieldWriteLeavesTheJournalTellingWhatTheDeviceHeld() throws {
        let configuration = try configuration()
        let checker = try lockChecker(configuration)
        let catalog = try AppCatalog.load(path: BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)
        let seeds: [UInt64] = (ProcessInfo.processInfo.environment["SHIELDBUS_GAP_SEEDS"] ?? "3,11,17,23").split(separator: ",").compactMap { UInt64($0) }
        for seed in seeds {
            let scenario = HeavyUserDays(seed: seed, days: 1, profile: "faithful").scenario
            let calm = try ScenarioRun.run(configuration: configuration, scenario: scenario, timeoutSeconds: 300)
            XCTAssertEqual(calm.exitStatus, 0, "seed \(seed): \(calm.errors)")
            let writes = calm.journal.filter { $0.topic == DeviceTopic.settingsWriteRequest }.count
            XCTAssertGreaterThan(writes, 1, "seed \(seed): the day writes shields")
            let calmViolations = checker.verdicts(for: calm.journal).flatMap(\.violations).map(\.description)
            var random = SeededRandom(seed: seed ^ 0x6A9)
            for side in ["--crash-before-saving", "--crash-after-saving"] {
                let occurrence = Int.random(in: 1...max(1, writes / 2), using: &random)
                let context = "seed \(seed), \(side) write \(occurrence) of \(writes) (SHIELDBUS_GAP_SEEDS=\(seed))"
                let work = TemporaryDirectory(prefix: "sbgap")
                var heldAtKill: [String: ShieldSettings] = [:]
                let run = try runCrashingBroker(scenario, crashing: [[side, DeviceTopic.settingsWriteRequest, "--crash-occurrence", "\(occurrence)"]],
                                                afterKill: { heldAtKill = try storesHeld(work.file("state")) }, work: work)
                XCTAssertEqual(run.endings, ["signal \(SIGKILL)", "exit 0"], "\(context): \(run.errors)")
                let journal = try JournalLines.decode(run.journal)
                // The resumed broker's start, up to the first thing a plugin or the scenario does there.
                let resumedAt = try XCTUnwrap(journal.lastIndex { $0.topic == "bus.started" }, context)
                let beforeAnyoneActs = journal[resumedAt...].firstIndex { $0.source != "broker" || $0.topic == DeviceTopic.scenarioStep } ?? journal.endIndex
                XCTAssertEqual(try meaning(storesTold(journal[..<beforeAnyoneActs]), seed: seed, catalog: catalog),
                               try meaning(heldAtKill, seed: seed, catalog: catalog),
                               "\(context): on resuming, the journal tells the stores as the killed broker's device held them")
                XCTAssertEqual(try meaning(storesTold(journal), seed: seed, catalog: catalog),
                               try meaning(storesHeld(work.file("state")), seed: seed, catalog: catalog),
                               "\(context): the journal ends telling the stores as the device holds them")
                XCTAssertEqual(checker.verdicts(for: journal).flatMap(\.violations).map(\.description), calmViolations,
                               "\(context): the lock invariant's verdict is the uncrashed day's")
            }
        }
    }

    /// What device.sqlite holds of the OS's other stated facts: the device clock's offset and zone, the token epoch,
    /// the authorization status (left out where the device never saved one).
    func otherFactsHeld(_ state: String) throws -> [String: String] {
        let connection = try SQLiteConnection(path: state + "/device.sqlite", flags: [.readOnly])
        var facts: [String: String] = [:]
        for key in ["clock.offsetMs", "clock.timeZone", "tokens.epoch", "authorization.status"] {
            let statement = try connection.prepare("SELECT json FROM state WHERE key = ?", bindings: [.text(key)])
            if try statement.step() { facts[key] = try statement.string(at: 0) }
        }
        return facts
    }

    /// The same facts as the journal tells them (the last event of the OS stating each). A zone never stated is the
    /// scenario's, `startZone` (the device stores the zone it starts in, and the journal says nothing of it).
    func otherFactsTold(_ journal: some Sequence<Envelope>, startZone: String) -> [String: String] {
        var facts: [String: String] = ["clock.timeZone": JSONValue.string(startZone).jsonText]
        for envelope in journal where envelope.source == "broker" {
            let body = envelope.bodyValue
            switch envelope.topic {
            case DeviceTopic.clockChanged: facts["clock.offsetMs"] = body["offsetMs"]?.jsonText
            case DeviceTopic.timeZoneChanged: facts["clock.timeZone"] = body["timeZone"]?.jsonText
            case DeviceTopic.osUpdated: facts["tokens.epoch"] = body["tokenEpoch"]?.jsonText
            case DeviceTopic.authorizationChanged: facts["authorization.status"] = body["status"]?.jsonText
            default: break
            }
        }
        return facts
    }

    /// The OS's other durable facts that its events state — the device clock set, the time zone changed, an iOS
    /// update's token epoch, authorization revoked (its shields removed) — each with the broker killed just before or
    /// just after saving the batch that states it, and resumed: the step is not played again (a step is played at
    /// most once), yet before anyone acts in the resumed run the journal tells every fact, and the stores, as the
    /// killed broker's device.sqlite held them; and the verdict is the uncrashed day's.
    func testABrokerKilledAtAnOSChangeLeavesTheJournalTellingWhatTheDeviceHeld() throws {
        let configuration = try configuration()
        let checker = try lockChecker(configuration)
        let catalog = try AppCatalog.load(path: BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)
        let scenario = """
            name: os-changes
            start: 2026-11-23T06:30
            timeZone: Europe/Berlin
            profile: faithful
            seed: 5
            end: day 1 12:00
            steps:
              - {at: "06:45", open: Habit Lock}
              - {after: 2m, home: true}
              - {at: "07:05", open: Instagram}
              - {at: "07:30", setClock: "+2h"}
              - {at: "08:00", timeZone: America/New_York}
              - {at: "08:30", osUpdate: true}
              - {at: "09:00", open: TikTok}
              - {at: "09:30", authorize: revoked}
              - {at: "10:00", open: Instagram}
              - {at: "10:30", authorize: approved}
              - {at: "10:31", open: Habit Lock}
            """
        let calm = try ScenarioRun.run(configuration: configuration, scenario: scenario)
        XCTAssertEqual(calm.exitStatus, 0, calm.errors)
        let calmViolations = checker.verdicts(for: calm.journal).flatMap(\.violations).map(\.description)
        // Authorization changes twice: approved at the app's request, then revoked (which removes the shields).
        let points = [(DeviceTopic.clockChanged, 1), (DeviceTopic.timeZoneChanged, 1), (DeviceTopic.osUpdated, 1),
                      (DeviceTopic.authorizationChanged, 1), (DeviceTopic.authorizationChanged, 2)]
        for (topic, occurrence) in points {
            for side in ["--crash-before-saving", "--crash-after-saving"] {
                let context = "\(side) \(topic) #\(occurrence)"
                let work = TemporaryDirectory(prefix: "sbgap")
                var heldAtKill: (facts: [String: String], stores: [String: ShieldSettings]) = ([:], [:])
                let run = try runCrashingBroker(scenario, crashing: [[side, topic, "--crash-occurrence", "\(occurrence)"]],
                                                afterKill: { heldAtKill = (try otherFactsHeld(work.file("state")), try storesHeld(work.file("state"))) },
                                                work: work)
                XCTAssertEqual(run.endings, ["signal \(SIGKILL)", "exit 0"], "\(context): \(run.errors)")
                let journal = try JournalLines.decode(run.journal)
                let resumedAt = try XCTUnwrap(journal.lastIndex { $0.topic == "bus.started" }, context)
                let beforeAnyoneActs = journal[resumedAt...].firstIndex { $0.source != "broker" || $0.topic == DeviceTopic.scenarioStep } ?? journal.endIndex
                let told = otherFactsTold(journal[..<beforeAnyoneActs], startZone: "Europe/Berlin")
                for (key, value) in heldAtKill.facts {
                    XCTAssertEqual(told[key], value, "\(context): on resuming, the journal tells \(key) as the killed broker's device held it")
                }
                XCTAssertEqual(try meaning(storesTold(journal[..<beforeAnyoneActs]), seed: 5, catalog: catalog),
                               try meaning(heldAtKill.stores, seed: 5, catalog: catalog),
                               "\(context): on resuming, the journal tells the stores as the killed broker's device held them")
                XCTAssertEqual(checker.verdicts(for: journal).flatMap(\.violations).map(\.description), calmViolations,
                               "\(context): the lock invariant's verdict is the uncrashed day's")
            }
        }
    }

    /// The threshold callbacks the device had marked delivered when its broker was killed: (activity, event, callback, scheduledFor).
    func crossingsMarkedDelivered(_ state: String) throws -> Set<[String]> {
        let connection = try SQLiteConnection(path: state + "/device.sqlite", flags: [.readOnly])
        let statement = try connection.prepare("SELECT json FROM state WHERE key = ?", bindings: [.text(DeviceActivityService.registrationsKey)])
        guard try statement.step(), let json = try statement.string(at: 0) else { return [] }
        let registrations = try DeviceAPICoding.decode([DeviceActivityService.Registration].self, from: Array(json.utf8))
        return Set(registrations.flatMap { registration in
            (registration.deliveredCrossings ?? []).map {
                [registration.activity.rawValue, $0.event.rawValue,
                 $0.callback == .eventDidReachThreshold ? DeviceTopic.eventDidReachThreshold : DeviceTopic.eventWillReachThresholdWarning,
                 "\(DeviceAPI.busTime($0.date))"]
            }
        })
    }

    /// The speed bump's threshold callback, with the broker killed just before or just after saving the batch that
    /// holds it, and resumed: the device marked it delivered as it went out (iOS calls it once per interval). Before
    /// the fix a kill before the save lost it for good — the journal was cut, the monitor never had it, and the
    /// reloaded device did not deliver it again: no speed bump that day. Now each callback the killed broker's device
    /// had marked delivered is in the journal exactly once.
    func testAThresholdCallbackLostWithABrokerKilledBeforeItsSaveIsDeliveredOnce() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let scenario = try String(contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("Config/scenarios/speed-bump-day.yml"), encoding: .utf8)
        for side in ["--crash-before-saving", "--crash-after-saving"] {
            let work = TemporaryDirectory(prefix: "sbgap")
            var marked: Set<[String]> = []
            let run = try runCrashingBroker(scenario, crashing: [[side, DeviceTopic.eventDidReachThreshold]], configuration: configuration,
                                            afterKill: { marked = try crossingsMarkedDelivered(work.file("state")) }, work: work)
            // The resumed run's verdict is not asserted: its virtual time starts at the last step played (12:35), before
            // the threshold's instant (12:40) — bus time runs back in the journal and the checker misreads the day, on
            // main as well, on either side of the save. Its end is: the day was played out.
            XCTAssertEqual(run.endings.first, "signal \(SIGKILL)", "\(side): \(run.errors)")
            XCTAssertFalse(marked.isEmpty, "\(side): the device had marked the threshold delivered when the broker died")
            let journal = try JournalLines.decode(run.journal)
            let told = journal.filter { [DeviceTopic.eventDidReachThreshold, DeviceTopic.eventWillReachThresholdWarning].contains($0.topic) && $0.source == "broker" }
                .map { [$0.bodyValue["activity"]?.stringValue ?? "", $0.bodyValue["event"]?.stringValue ?? "", $0.topic, $0.bodyValue["scheduledFor"]?.jsonText ?? ""] }
            XCTAssertTrue(journal.contains { $0.topic == DeviceTopic.scenarioEnded }, "\(side): the resumed run played the day out")
            for crossing in marked.sorted(by: { $0.joined() < $1.joined() }) {
                XCTAssertEqual(told.filter { $0 == crossing }.count, 1, "\(side): \(crossing) is in the journal once")
            }
        }
    }
}

/// A resumed scenario's clock starts where the killed broker had got to, not at the last step it played: a timer
/// that fired after that step (a threshold between two steps) was journaled — and acted on by the device — at its
/// own time, so the resumed journal ran back in time (and the checker misread the day: speed-bump-day, killed after
/// saving its threshold, was judged broken three times). Cut off or saved, what was journaled sets the start.
extension FaultTests {
    func testAResumedRunGoesOnFromWhereTheKilledBrokerHadGot() throws {
        let topics = [DeviceTopic.eventDidReachThreshold, DeviceTopic.intervalDidStart, DeviceTopic.intervalDidEnd,
                      DeviceTopic.settingsWriteRequest, "shield.configuration.request"]
        var random = SeededRandom(seed: 0x7E5)
        for product in ["speed-bump", "habit-lock", "focus-window"] {
            let configuration = try ScenarioRun.shippedConfiguration(product)
            let scenario = try String(contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("Config/scenarios/\(product)-day.yml"), encoding: .utf8)
            let calm = try ScenarioRun.run(configuration: configuration, scenario: scenario)
            XCTAssertEqual(calm.exitStatus, 0, "\(product)-day without a crash: \(calm.errors)")
            // The day's events on each topic: a crash at one of them, chosen by the seed (the threshold's first, the
            // one that found it, whenever the day has one).
            let counts = Dictionary(grouping: calm.journal.filter { topics.contains($0.topic) }, by: \.topic).mapValues(\.count)
            for side in ["--crash-before-saving", "--crash-after-saving"] {
                var crashes: [[String]] = counts[DeviceTopic.eventDidReachThreshold] == nil ? [] : [[side, DeviceTopic.eventDidReachThreshold]]
                for _ in 0..<2 {
                    let (topic, count) = counts.sorted { $0.key < $1.key }.randomElement(using: &random)!
                    crashes.append([side, topic, "--crash-occurrence", "\(Int.random(in: 1...count, using: &random))"])
                }
                for crash in crashes {
                    let context = "\(product)-day, \(crash.joined(separator: " "))"
                    let work = TemporaryDirectory(prefix: "sbresume")
                    let run = try runCrashingBroker(scenario, crashing: [crash], configuration: configuration, work: work)
                    XCTAssertEqual(run.endings, ["signal \(SIGKILL)", "exit 0"], "\(context): killed, then resumed with the lock invariant held: \(run.errors.suffix(1200))")
                    let journal = try JournalLines.decode(run.journal)
                    let back = zip(journal, journal.dropFirst()).first { $1.time < $0.time }
                    XCTAssertTrue(back == nil, "\(context): bus time ran back from seq \(back?.0.seq ?? 0) (\(back?.0.topic ?? "")) to seq \(back?.1.seq ?? 0) (\(back?.1.topic ?? ""))")
                }
            }
        }
    }
}
