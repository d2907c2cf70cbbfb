/// The source files `shieldbus plugin new` writes: a plugin per kind on its SDK class, and a test that runs it
/// against the real broker. `__NAME__`, `__CLASS__`, `__TESTS__` and `__ROLE__` are filled in.
enum PluginTemplates {
    static func main(name: PluginName, kind: PluginKind) -> String {
        let (purpose, code) = bodies[kind]!
        let source = header.replacingOccurrences(of: "__PURPOSE__", with: purpose) + imports[kind]!.map { "import \($0)\n" }.joined()
            + "\n" + code + footer
        return fill(source, name: name, kind: kind)
    }

    /// What each kind imports: an extension Apple's frameworks, as its iOS code does; the kinds that handle raw
    /// events the bus protocol's types (Envelope, Role, JSONValue).
    private static let imports: [PluginKind: [String]] = [
        .monitor: ["DeviceActivity", "Foundation", "ManagedSettings", "os", "ShieldBusSDK"],
        .shield: ["ManagedSettings", "ManagedSettingsUI", "ShieldBusSDK", "UIKit"],
        .action: ["Foundation", "ManagedSettings", "os", "ShieldBusSDK"],
        .notifier: ["BusProtocol", "ShieldBusSDK"],
        .report: ["BusProtocol", "ShieldBusSDK"],
        .app: ["FamilyControls", "os", "ShieldBusSDK"],
        .generic: ["BusProtocol", "ShieldBusSDK"],
    ]

    /// The modules a generated plugin's target depends on (Package.swift).
    static let dependencies = ["ShieldBusSDK", "BusProtocol", "ManagedSettings", "ManagedSettingsUI", "DeviceActivity", "FamilyControls",
                               "ShieldBusUIKit", "ShieldBusOS", "ShieldBusUserNotifications"]

    /// Its Swift settings: `import UIKit`, `os` and `UserNotifications` load ShieldBus's slivers of them (Package.swift,
    /// `appleModuleAliases`, says why they are not built under those names).
    static let swiftSettings = #"swiftSettings: [.unsafeFlags(["-module-alias", "UIKit=ShieldBusUIKit", "-module-alias", "os=ShieldBusOS", "-module-alias", "UserNotifications=ShieldBusUserNotifications"])]"#

    /// The host: App Groups behind `UserDefaults`, and the extension's principal class (docs/porting-from-ios.md).
    private static let footer = """

        // App Groups behind UserDefaults: this module's own declaration wins over Foundation's (docs/porting-from-ios.md).
        typealias UserDefaults = AppGroupUserDefaults

        // The principal class (an extension's NSExtensionPrincipalClass). A program with several extensions lists them
        // all — PluginHost.run(principalClasses: ["A": A.init, "B": B.init]) — and the configuration names one (`principalClass:`).
        PluginHost.run(principalClasses: ["__CLASS__": __CLASS__.init])

        """

    static func test(name: PluginName, kind: PluginKind) -> String {
        fill(testHeader + (kindTest[kind] ?? "") + "}\n", name: name, kind: kind)
    }

    private static func fill(_ template: String, name: PluginName, kind: PluginKind) -> String {
        template.replacingOccurrences(of: "__NAME__", with: name.name)
            .replacingOccurrences(of: "__CLASS__", with: name.className)
            .replacingOccurrences(of: "__TESTS__", with: name.testName)
            .replacingOccurrences(of: "__ROLE__", with: kind.role.rawValue)
    }

    private static let header = #"""
        // __NAME__: __PURPOSE__
        //
        // Run by the broker from a configuration entry (see `shieldbus plugin new --help`), or by hand next to a
        // running broker: `swift run __NAME__`.


        """#

    /// Per kind: the one-line purpose, and the plugin's class.
    private static let bodies: [PluginKind: (String, String)] = [
        .monitor: ("a DeviceActivity monitor — hears monitored intervals start and end, and thresholds being reached.", #"""
            /// The OS (the broker) calls it as the schedules started with `DeviceActivityCenter().startMonitoring` run.
            /// Written as on iOS: `Date()` and `Calendar.current` are the device's, `UserDefaults(suiteName:)` the App Group.
            final class __CLASS__: DeviceActivityMonitor {
                private let logger = Logger(subsystem: "__NAME__", category: "monitor")

                override func intervalDidStart(for activity: DeviceActivityName) {
                    logger.info("interval started: \(activity.rawValue, privacy: .public) at \(Date(), privacy: .public)")
                }

                override func intervalDidEnd(for activity: DeviceActivityName) {
                    logger.info("interval ended: \(activity.rawValue, privacy: .public)")
                }

                override func eventDidReachThreshold(_ event: DeviceActivityEvent.Name, activity: DeviceActivityName) {
                    logger.info("\(event.rawValue, privacy: .public) reached its threshold in \(activity.rawValue, privacy: .public)")
                }
            }

            """#),
        .shield: ("a shield configuration extension — what the shields over blocked apps and sites look like.", #"""
            /// The OS (the broker) asks it for the shield to draw whenever a shielded app or web domain is opened.
            final class __CLASS__: ShieldConfigurationDataSource {
                override func configuration(shielding application: Application) -> ShieldConfiguration {
                    ShieldConfiguration(
                        backgroundColor: .black,
                        title: ShieldConfiguration.Label(text: "\(application.localizedDisplayName ?? "This app") is blocked", color: .white),
                        subtitle: ShieldConfiguration.Label(text: "Time for something else.", color: .gray),
                        primaryButtonLabel: ShieldConfiguration.Label(text: "Close", color: .white)
                    )
                }

                override func configuration(shielding webDomain: WebDomain) -> ShieldConfiguration {
                    ShieldConfiguration(title: ShieldConfiguration.Label(text: "\(webDomain.domain ?? "This site") is blocked", color: .white))
                }
            }

            """#),
        .action: ("a shield action extension — what the buttons on a shield do.", #"""
            /// The OS (the broker) asks it what a button press on a shield does. It never lifts a shield itself.
            final class __CLASS__: ShieldActionDelegate {
                private let logger = Logger(subsystem: "__NAME__", category: "action")

                override func handle(action: ShieldAction, for application: ApplicationToken,
                                     completionHandler: @escaping (ShieldActionResponse) -> Void) {
                    logger.info("\(action.rawValue, privacy: .public) at \(Date(), privacy: .public)")
                    switch action {
                    case .primaryButtonPressed: completionHandler(.close)
                    case .secondaryButtonPressed: completionHandler(.defer)  // the shield stays and is drawn again
                    }
                }
            }

            """#),
        .notifier: ("a notifier — posts a notification when the person opens an app.", #"""
            /// Hears `activity.app.opened` and posts a gentle notification about it.
            final class __CLASS__: BusPlugin {
                override var role: Role { .notifier }
                override var subscriptions: [String] { [DeviceTopic.appOpened] }

                override func handle(_ envelope: Envelope) {
                    guard let opened = try? DeviceAPICoding.decode(AppActivity.self, from: envelope.body) else { return }
                    let app = opened.application.localizedDisplayName ?? "an app"
                    do {
                        try Notifications.post(NotificationRequest(id: "__NAME__-\(envelope.seq)", title: "Mindful moment",
                                                                   body: "\(app) was opened", kind: "app-opened"))
                    } catch {
                        PluginRuntime.current?.logger.error("could not post a notification: \(error)")
                    }
                }
            }

            """#),
        .report: ("a report builder — counts app opens per app and publishes the tally.", #"""
            /// Hears `activity.app.opened` and publishes `report.__NAME__.opens`: opens per app so far.
            final class __CLASS__: BusPlugin {
                override var role: Role { .report }
                override var subscriptions: [String] { [DeviceTopic.appOpened] }
                private var opens: [String: Int64] = [:]

                override func handle(_ envelope: Envelope) {
                    guard let opened = try? DeviceAPICoding.decode(AppActivity.self, from: envelope.body) else { return }
                    opens[opened.application.localizedDisplayName ?? "unknown", default: 0] += 1
                    do {
                        try PluginRuntime.current?.publish("report.__NAME__.opens", json: .object(opens.mapValues { .int($0) }))
                    } catch {
                        PluginRuntime.current?.logger.error("could not publish the tally: \(error)")
                    }
                }
            }

            """#),
        .app: ("the companion app — asks for Screen Time authorization when it starts.", #"""
            /// The main app: the only plugin that may open URLs and show the FamilyActivityPicker.
            final class __CLASS__: App {
                private let logger = Logger(subsystem: "__NAME__", category: "app")

                override func didStart() {
                    do {
                        let status: AuthorizationStatus = try AuthorizationCenter.shared.requestAuthorization(for: .individual)
                        logger.info("authorization: \(status.rawValue, privacy: .public)")
                    } catch {
                        logger.error("authorization failed: \(String(describing: error), privacy: .public)")
                    }
                }

                override func willEnterForeground() {
                    logger.info("in the foreground")
                }
            }

            """#),
        .generic: ("a plugin — answers each `app.__NAME__.ping` with an `app.__NAME__.pong`.", #"""
            /// Hears `app.__NAME__.ping` and answers `app.__NAME__.pong` with the ping's sequence number.
            final class __CLASS__: BusPlugin {
                override var subscriptions: [String] { ["app.__NAME__.ping"] }

                override func handle(_ envelope: Envelope) {
                    do {
                        try PluginRuntime.current?.publish("app.__NAME__.pong", json: ["ping": .int(Int64(envelope.seq))])
                    } catch {
                        PluginRuntime.current?.logger.error("could not answer: \(error)")
                    }
                }
            }

            """#),
    ]

    private static let testHeader = #"""
        // Tests of the __NAME__ plugin: the real broker runs it as a configured plugin (ShieldBusTestSupport).

        import BusProtocol
        import ShieldBusTestSupport
        import XCTest

        final class __TESTS__: XCTestCase {
            let configuration = """
                name: __NAME__-test
                plugins:
                  - {name: __NAME__, executable: \(BuildProducts.path("__NAME__")), role: __ROLE__}
                """

            /// Starts a broker running the plugin and waits until the plugin has said hello.
            func startBroker() throws -> BrokerProcess {
                let broker = try BrokerProcess(configuration: configuration)
                waitUntil("__NAME__ to connect (its log: \(broker.runtime.logsPath)/__NAME__.log)") { plugin(in: broker)?["connected"]?.boolValue == true }
                return broker
            }

            func plugin(in broker: BrokerProcess) -> JSONValue? {
                (try? broker.status())?["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == "__NAME__" }
            }

            func testItRunsUnderTheBrokerInItsRole() throws {
                let broker = try startBroker()
                XCTAssertEqual(plugin(in: broker)?["role"]?.stringValue, "__ROLE__")
                XCTAssertEqual(plugin(in: broker)?["restarts"]?.intValue, 0)
                XCTAssertEqual(broker.stop(), 0, broker.log())
            }

        """#

    /// A test of what each kind does, where a test client can cause it.
    private static let kindTest: [PluginKind: String] = [
        .generic: #"""

                func testItAnswersAPing() throws {
                    let broker = try startBroker()
                    let tester = try broker.connect(name: "__NAME__-tester", subscriptions: ["app.__NAME__."])
                    try tester.publish(Publish(topic: "app.__NAME__.ping", body: [:]))
                    let events = try collectEvents(from: tester) { $0.contains { $0.topic == "app.__NAME__.pong" } }
                    let ping = try XCTUnwrap(events.first { $0.topic == "app.__NAME__.ping" })
                    XCTAssertEqual(events.first { $0.topic == "app.__NAME__.pong" }?.bodyValue["ping"]?.intValue, Int64(ping.seq))
                }

            """#,
        .notifier: #"""

                func testItPostsANotificationWhenAnAppIsOpened() throws {
                    let broker = try startBroker()
                    let tester = try broker.connect(name: "__NAME__-tester", subscriptions: ["notification.posted"])
                    // The person opens an app (as `shieldbus do open Instagram`): only the device says an app opened.
                    try tester.publish(Publish(topic: "input.open.request", body: ["app": "Instagram"], corr: "__NAME__-tester-1"))
                    let posted = try collectEvents(from: tester) { $0.contains { $0.topic == "notification.posted" } }.first { $0.topic == "notification.posted" }
                    XCTAssertEqual(posted?.bodyValue["body"]?.stringValue, "Instagram was opened")
                }

            """#,
        .report: #"""

                func testItCountsAppOpens() throws {
                    let broker = try startBroker()
                    let tester = try broker.connect(name: "__NAME__-tester", subscriptions: ["report.__NAME__."])
                    // The person opens Instagram, goes home and opens it again (as `shieldbus do`): only the device says an app opened.
                    for (index, input) in [("open", ["app": "Instagram"]), ("home", [:]), ("open", ["app": "Instagram"])].enumerated() {
                        try tester.publish(Publish(topic: "input.\(input.0).request", body: .object(input.1.mapValues { .string($0) }), corr: "__NAME__-tester-\(index)"))
                    }
                    let tallies = try collectEvents(from: tester) { $0.filter { $0.topic == "report.__NAME__.opens" }.count == 2 }
                    XCTAssertEqual(tallies.last { $0.topic == "report.__NAME__.opens" }?.bodyValue, ["Instagram": 2])
                }

            """#,
    ]
}
