// swift-tools-version:6.1
// ShieldBus: Apple's Screen Time architecture as a local ZeroMQ message-bus plugin host.
import Foundation
import PackageDescription

// Release builds start short-lived plugins fast (docs/benchmarks.md, "Where the time goes"): plugins are linked without
// PIE (no relocations to apply at each start; docs/security.md § 8), and libzmq, SQLite and libstdc++ come from their
// archives. The broker and the command-line tool stay position-independent.
let pluginLinkerSettings: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "-no-pie"], .when(configuration: .release))]

// libzmq and SQLite: shared libraries in debug builds, their archives (from libzmq3-dev, libsqlite3-dev and their
// dependencies) in release builds. The module maps name no library, so these settings are the only place that does;
// `-l:` names an archive itself. libzmq.a's GSSAPI mechanism, which no ShieldBus socket uses, is linked to
// CZeroMQWithoutGSSAPI's refusals instead of the Kerberos libraries (seven shared libraries at every start and in every
// fork; docs/security.md § 2); libstdc++ comes from GCC's archive through the linker script
// Sources/CZeroMQ/StaticLink/libstdc++.so.
let releaseLibraryPath = Context.packageDirectory + "/Sources/CZeroMQ/StaticLink"
let zeroMQLinkerSettings: [LinkerSetting] = [
    .linkedLibrary("zmq", .when(configuration: .debug)),
    .unsafeFlags(["-L", releaseLibraryPath,
                  "-Xlinker", "-l:libzmq.a", "-Xlinker", "-l:libsodium.a", "-Xlinker", "-l:libpgm.a",
                  "-Xlinker", "-l:libnorm.a", "-Xlinker", "-l:libprotokit.a",
                  "-Xlinker", "-l:libbsd.a", "-Xlinker", "-l:libmd.a",
                  // libzmq.a's C++ comes after swiftc's own -lstdc++, so name it again (the archive, as above).
                  "-Xlinker", "-lstdc++"], .when(configuration: .release)),
]
let sqliteLinkerSettings: [LinkerSetting] = [
    .linkedLibrary("sqlite3", .when(configuration: .debug)),
    // The library path too: a program with SQLite but no libzmq (the report bench) gets the C++ archive as well.
    .unsafeFlags(["-L", releaseLibraryPath, "-Xlinker", "-l:libsqlite3.a"], .when(configuration: .release)),
]

// Extension code as developers bring it from iOS compiles in Swift 5 mode (completion handlers handed to tasks, as
// Apple's samples do; a program global counted in a callback); ShieldBus's own code is checked in Swift 6 mode.
let iOSExtensionCodeMode: [SwiftSetting] = [.swiftLanguageMode(.v5)]

// What a plugin imports to be written as on iOS.
let appleFrameworks: [Target.Dependency] = ["ManagedSettings", "ManagedSettingsUI", "DeviceActivity", "FamilyControls",
                                            "ShieldBusUIKit", "ShieldBusOS", "ShieldBusUserNotifications"]
// `import UIKit`, `import os` and `import UserNotifications` in a plugin load ShieldBus's slivers of them (swiftc's
// -module-alias). The slivers are not built under those names: a module named `os` on the search path would turn
// every dependency's `#if canImport(os)` on (swift-argument-parser's Mutex then needs os_unfair_lock).
let appleModuleAliases: [SwiftSetting] = [.unsafeFlags([
    "-module-alias", "UIKit=ShieldBusUIKit", "-module-alias", "os=ShieldBusOS", "-module-alias", "UserNotifications=ShieldBusUserNotifications",
])]

let package = Package(
    name: "ShieldBus",
    products: [
        .executable(name: "shieldbus", targets: ["ShieldBusCLI"]),
        .library(name: "ShieldBusSDK", targets: ["ShieldBusSDK"]),
        // Apple's Screen Time frameworks under their own names, so extension code builds with its imports unchanged;
        // and the least of UIKit, os and UserNotifications that such code reaches for (docs/porting-from-ios.md).
        .library(name: "ManagedSettings", targets: ["ManagedSettings"]),
        .library(name: "ManagedSettingsUI", targets: ["ManagedSettingsUI"]),
        .library(name: "DeviceActivity", targets: ["DeviceActivity"]),
        .library(name: "MonitorKit", targets: ["MonitorKit"]),
        .library(name: "FamilyControls", targets: ["FamilyControls"]),
        // Imported as UIKit, os and UserNotifications through `appleModuleAliases`: a module of its own named `os` or
        // `UIKit` would make every package's `#if canImport(os)` true on Linux (swift-argument-parser's is).
        .library(name: "ShieldBusUIKit", targets: ["ShieldBusUIKit"]),
        .library(name: "ShieldBusOS", targets: ["ShieldBusOS"]),
        .library(name: "ShieldBusUserNotifications", targets: ["ShieldBusUserNotifications"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", exact: "5.0.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", exact: "0.2.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", exact: "2.8.1"),
    ],
    targets: [
        // The bus: libzmq, our wrapper over it, the wire protocol, a client connection, the broker.
        .systemLibrary(name: "CZeroMQ", path: "Sources/CZeroMQ", providers: [.apt(["libzmq3-dev"])]),
        // What libzmq.a's unused GSSAPI mechanism calls, refusing (release programs link no Kerberos library).
        .target(name: "CZeroMQWithoutGSSAPI"),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ", "CZeroMQWithoutGSSAPI"], linkerSettings: zeroMQLinkerSettings),
        .target(name: "BusProtocol"),
        .target(name: "BusClient", dependencies: ["ZeroMQ", "BusProtocol", .product(name: "Logging", package: "swift-log")]),
        .target(name: "Broker", dependencies: ["ZeroMQ", "BusProtocol", "BusClient", "SQLite", "CProcessControl", .product(name: "Logging", package: "swift-log")]),
        .target(name: "Configuration", dependencies: ["BusProtocol", "CivilCalendar", "DeviceAPI", "Yams"]),
        // What the tools and the Studio share: connecting to a broker, the person's input, events for people.
        .target(name: "BusTools", dependencies: ["BusClient", "BusProtocol", "Configuration", "DeviceAPI"]),

        // Screen Time's domain model, shared state, and usage reports.
        .target(name: "CivilCalendar"),
        .target(name: "ScreenTime", dependencies: ["CivilCalendar"]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "SQLite", dependencies: ["CSQLite"], linkerSettings: sqliteLinkerSettings),
        // Foundation's JSONEncoder bytes (sorted keys), written several times faster: device API bodies, App-Group values.
        .target(name: "SortedJSON", dependencies: ["BusProtocol"]),
        .target(name: "AppGroupStore", dependencies: ["BusProtocol", "CProcessControl", "SQLite", "SortedJSON"]),
        .target(name: "UsageReports", dependencies: ["CivilCalendar"]),
        .target(name: "DeviceAPI", dependencies: ["BusProtocol", "ScreenTime", "SortedJSON"]),
        .target(name: "LockInvariant", dependencies: ["BusProtocol", "Configuration", "DeviceAPI", "ScreenTime"]),
        .target(name: "Explore", dependencies: ["BusProtocol", "CProcessControl", "Configuration", "DeviceAPI", "LockInvariant"]),
        // The plugin SDK: what plugins depend on (never the broker).
        .target(name: "CProcessControl"),
        // The device clock behind `Date()` in a plugin process (the C library's real-time calls, redefined).
        .target(name: "CDeviceClock"),
        // A plugin process serving as its own launch template (a zygote), before its `main` runs.
        .target(name: "CLaunchTemplate", dependencies: ["CProcessControl"]),
        .target(name: "ShieldBusSDK", dependencies: [
            "BusClient", "CProcessControl", "CDeviceClock", "CLaunchTemplate", "BusProtocol", "CivilCalendar", "DeviceAPI", "ScreenTime", "AppGroupStore", "SQLite",
            "ZeroMQ", .product(name: "Logging", package: "swift-log"),
        ]),
        // Apple's framework names over the SDK (plugins import these as on iOS).
        .target(name: "ShieldBusUIKit", dependencies: ["ScreenTime"]),
        .target(name: "ShieldBusOS"),
        .target(name: "ManagedSettings", dependencies: ["ShieldBusSDK", "ScreenTime", "DeviceAPI"]),
        .target(name: "ManagedSettingsUI", dependencies: ["ManagedSettings", "ShieldBusUIKit", "ShieldBusSDK", "ScreenTime", "DeviceAPI"]),
        .target(name: "DeviceActivity", dependencies: ["ShieldBusSDK", "ScreenTime", "DeviceAPI"]),
        // What makes a monitor survive iOS, for any product: checks at true instants, wall-clock windows, passes.
        .target(name: "MonitorKit", dependencies: ["ShieldBusSDK", "ScreenTime", "CivilCalendar", "DeviceActivity", "ManagedSettings", "FamilyControls",
                                                    .product(name: "Logging", package: "swift-log")]),
        .target(name: "FamilyControls", dependencies: ["ShieldBusSDK", "ScreenTime", "DeviceAPI"]),
        .target(name: "ShieldBusUserNotifications", dependencies: ["ShieldBusSDK", "DeviceAPI"]),
        .target(name: "DeviceOS", dependencies: [
            "Broker", "BusProtocol", "Configuration", "DeviceAPI", "ScreenTime", "SQLite",
            .product(name: "Logging", package: "swift-log"),
        ]),

        // ShieldBus Studio: the simulated phone and its bus in a browser, a bus client like `tap` (never the broker).
        .target(name: "Studio", dependencies: [
            "AppGroupStore", "BusClient", "BusProtocol", "BusTools", "Configuration", "DeviceAPI", "ScreenTime",
            // swift-configuration (a dependency of theirs) names a module `Configuration`, as ours is named.
            .product(name: "Hummingbird", package: "hummingbird", moduleAliases: ["Configuration": "SwiftConfiguration"]),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket", moduleAliases: ["Configuration": "SwiftConfiguration"]),
            .product(name: "Logging", package: "swift-log"),
        ], resources: [.copy("Resources")]),

        // What `shieldbus run` derives from its options and a configuration, as a library a test can plan a run with.
        .target(name: "RunPlanning", dependencies: ["AppGroupStore", "Broker", "BusClient", "BusProtocol", "Configuration", "DeviceAPI", "DeviceOS", "Explore",
                                                    "LockInvariant", "SQLite", "ZeroMQ"]),

        .executableTarget(name: "ShieldBusCLI", dependencies: [
            "RunPlanning", "Studio", "BusTools", "Broker", "BusClient", "BusProtocol", "CProcessControl", "Configuration", "DeviceAPI", "DeviceOS", "AppGroupStore", "UsageReports", "LockInvariant", "SQLite", "ZeroMQ",
            "Explore", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // Test support: the broker harness and small fixture processes the tests start.
        .target(name: "ShieldBusTestSupport", dependencies: ["AppGroupStore", "BusClient", "BusProtocol", "Configuration", "DeviceOS", "SQLite"], path: "Tests/Support", exclude: ["toggle_fs.py"]),
        .executableTarget(name: "bus-test-plugin", dependencies: ["BusClient", "BusProtocol"], path: "Tests/Fixtures/BusTestPlugin"),
        .executableTarget(name: "appgroup-stress", dependencies: ["AppGroupStore"], path: "Tests/Fixtures/AppGroupStress"),
        .target(name: "FixtureWork", path: "Tests/Fixtures/FixtureWork"),
        .executableTarget(name: "fixture-shield", dependencies: ["ShieldBusSDK", "FixtureWork"] + appleFrameworks, path: "Tests/Fixtures/FixtureShield", swiftSettings: appleModuleAliases),
        .executableTarget(name: "fixture-app", dependencies: ["ShieldBusSDK"] + appleFrameworks, path: "Tests/Fixtures/FixtureApp", swiftSettings: appleModuleAliases),
        .target(name: "NaivePluginKit", dependencies: ["ShieldBusSDK", "ReferenceKit"] + appleFrameworks, path: "Tests/Fixtures/NaivePluginKit",
                swiftSettings: appleModuleAliases),
        .executableTarget(name: "naive-plugin", dependencies: ["ShieldBusSDK", "NaivePluginKit"], path: "Tests/Fixtures/NaivePlugins"),
        .executableTarget(name: "state-corrupter", dependencies: ["ShieldBusSDK"], path: "Tests/Fixtures/StateCorrupter"),
        .executableTarget(name: "fixture-memory-monitor", dependencies: ["ShieldBusSDK", "CProcessControl", "ZeroMQ"] + appleFrameworks, path: "Tests/Fixtures/MemoryMonitor",
                          swiftSettings: appleModuleAliases + iOSExtensionCodeMode),
        .executableTarget(name: "fixture-callback-monitor", dependencies: ["ShieldBusSDK"] + appleFrameworks, path: "Tests/Fixtures/CallbackMonitor", swiftSettings: appleModuleAliases),
        .executableTarget(name: "fixture-echo-monitor", dependencies: ["ShieldBusSDK"] + appleFrameworks, path: "Tests/Fixtures/EchoMonitor", swiftSettings: appleModuleAliases),
        .executableTarget(name: "fixture-shield-then-call", dependencies: ["ShieldBusSDK"] + appleFrameworks, path: "Tests/Fixtures/ShieldThenCallMonitor", swiftSettings: appleModuleAliases),
        .executableTarget(name: "fixture-forked-threads", dependencies: ["ShieldBusSDK", "CProcessControl"], path: "Tests/Fixtures/ForkedThreads"),
        .executableTarget(name: "fixture-outsider", dependencies: ["ZeroMQ"], path: "Tests/Fixtures/Outsider"),
        .target(name: "ModelSupport", path: "Tests/Fixtures/ModelSupport"),
        .executableTarget(name: "bedtime-model", dependencies: ["ModelSupport"], path: "Tests/Fixtures/BedtimeModel"),
        .executableTarget(name: "fixture-alternate-days", dependencies: ["ShieldBusSDK", "MonitorKit"] + appleFrameworks, path: "Tests/Fixtures/AlternateDays",
                          swiftSettings: appleModuleAliases),
        .executableTarget(name: "alternate-days-model", dependencies: ["ModelSupport"], path: "Tests/Fixtures/AlternateDaysModel"),

        // The reference plugins (Plugins/), and what they share. A plugin's code is a library a test can host in its
        // process (`InProcessPlugin`): ReferenceKit, or its own (`Plugins/<Name>Extension(s)`); its executable is a thin
        // `main` that runs it. Their release builds link at a fixed address (`pluginLinkerSettings`): an ios-realistic
        // day starts the monitor ~50 times.
        .target(name: "ReferenceKit", dependencies: ["ShieldBusSDK", "MonitorKit", .product(name: "Logging", package: "swift-log")] + appleFrameworks, path: "Plugins/ReferenceKit",
                swiftSettings: appleModuleAliases),
        .executableTarget(name: "activity-monitor", dependencies: ["ShieldBusSDK", "ReferenceKit"], path: "Plugins/ActivityMonitor",
                          linkerSettings: pluginLinkerSettings),
        .target(name: "ShieldRendererExtension", dependencies: ["ShieldBusSDK", "ReferenceKit"], path: "Plugins/ShieldRendererExtension",
                resources: [.copy("Resources")]),
        .executableTarget(name: "shield-renderer", dependencies: ["ShieldBusSDK", "ShieldRendererExtension"], path: "Plugins/ShieldRenderer",
                          linkerSettings: pluginLinkerSettings),
        .executableTarget(name: "action-delegate", dependencies: ["ShieldBusSDK", "ReferenceKit"], path: "Plugins/ActionDelegate",
                          linkerSettings: pluginLinkerSettings),
        .executableTarget(name: "companion-app", dependencies: ["ShieldBusSDK", "ReferenceKit"], path: "Plugins/CompanionApp",
                          linkerSettings: pluginLinkerSettings),
        .target(name: "ReportBuilderExtension", dependencies: ["ShieldBusSDK", "ReferenceKit", "UsageReports", "SortedJSON"], path: "Plugins/ReportBuilderExtension"),
        // The heap's thresholds are the process's own: they stay in the executable.
        .executableTarget(name: "report-builder", dependencies: ["ShieldBusSDK", "ReportBuilderExtension", "CProcessControl"], path: "Plugins/ReportBuilder",
                          linkerSettings: pluginLinkerSettings),
        // Products written only against the public API (the Apple-shaped modules, the SDK, MonitorKit).
        .target(name: "BedtimeKit", dependencies: ["ShieldBusSDK", "MonitorKit"] + appleFrameworks, path: "Plugins/BedtimeKit", swiftSettings: appleModuleAliases),
        .target(name: "BedtimeExtensions", dependencies: ["ShieldBusSDK", "MonitorKit", "BedtimeKit"] + appleFrameworks, path: "Plugins/BedtimeExtensions",
                swiftSettings: appleModuleAliases),
        .executableTarget(name: "bedtime", dependencies: ["ShieldBusSDK", "BedtimeExtensions"], path: "Plugins/Bedtime",
                          swiftSettings: appleModuleAliases, linkerSettings: pluginLinkerSettings),
        .target(name: "ProfilesExtensions", dependencies: ["ShieldBusSDK", "MonitorKit"] + appleFrameworks, path: "Plugins/ProfilesExtensions",
                swiftSettings: appleModuleAliases),
        .executableTarget(name: "profiles", dependencies: ["ShieldBusSDK", "ProfilesExtensions"], path: "Plugins/Profiles",
                          swiftSettings: appleModuleAliases, linkerSettings: pluginLinkerSettings),
        .target(name: "NotifierExtension", dependencies: ["ShieldBusSDK", "ReferenceKit"], path: "Plugins/NotifierExtension"),
        .executableTarget(name: "notifier", dependencies: ["ShieldBusSDK", "NotifierExtension"], path: "Plugins/Notifier",
                          linkerSettings: pluginLinkerSettings),

        // Benchmarks (run with `make bench`, never as tests).
        .executableTarget(name: "shieldbus-bench", dependencies: [
            "Broker", "BusClient", "BusProtocol", "Configuration", "DeviceAPI", "SQLite", "ZeroMQ", .product(name: "Histogram", package: "hdrhistogram-swift"),
        ], path: "Benchmarks/ShieldBusBench"),
        .executableTarget(name: "shieldbus-report-bench", dependencies: ["AppGroupStore", "UsageReports"], path: "Benchmarks/ReportBench"),
        .testTarget(name: "ShieldBusBenchTests", dependencies: ["shieldbus-bench"]),

        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        .testTarget(name: "BusProtocolTests", dependencies: ["BusProtocol", "BusClient", "Configuration", "DeviceAPI"]),
        .testTarget(name: "ConfigurationTests", dependencies: ["Configuration", "Yams"]),
        .testTarget(name: "ScreenTimeTests", dependencies: ["ScreenTime", "CivilCalendar", "ShieldBusTestSupport"]),
        .testTarget(name: "SortedJSONTests", dependencies: ["SortedJSON", "Configuration", "DeviceAPI", "ScreenTime"]),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite", "CSQLite", "ShieldBusTestSupport"]),
        .testTarget(name: "AppGroupStoreTests", dependencies: ["AppGroupStore", "SQLite", "ShieldBusTestSupport", "appgroup-stress"]),
        .testTarget(name: "UsageReportsTests", dependencies: ["UsageReports"]),
        .testTarget(name: "SupervisionTests", dependencies: ["BusClient", "BusProtocol", "ShieldBusTestSupport", "AppGroupStore", "SQLite", "ShieldBusSDK", "DeviceActivity", "Configuration", "CProcessControl", "CDeviceClock"]),
        .testTarget(name: "ReportBuilderTests", dependencies: ["BusProtocol", "BusClient", "ShieldBusTestSupport", "UsageReports", "AppGroupStore", "ReportBuilderExtension", "SortedJSON", "Configuration"]),
        .testTarget(name: "NotifierTests", dependencies: ["BusProtocol", "ShieldBusTestSupport", "ReferenceKit", "Configuration", "SQLite"]),
        .testTarget(name: "ExploreTests", dependencies: ["Explore", "Configuration", "BusProtocol", "DeviceAPI", "ShieldBusTestSupport"]),
        .testTarget(name: "LessonTests", dependencies: ["InMemoryRun", "BusProtocol", "BusClient", "Configuration", "DeviceOS", "LockInvariant", "ShieldBusTestSupport", "AppGroupStore", "UsageReports", "SQLite", "ZeroMQ"]),
        .testTarget(name: "LockInvariantTests", dependencies: ["BusProtocol", "Configuration", "DeviceAPI", "DeviceOS", "LockInvariant", "ScreenTime", "ShieldBusTestSupport"]),
        .testTarget(name: "DeviceOSTests", dependencies: ["Broker", "BusProtocol", "BusClient", "ShieldBusTestSupport", "Configuration", "DeviceAPI", "DeviceOS", "ScreenTime", "AppGroupStore", "SQLite"]),
        .testTarget(name: "PythonPluginTests", dependencies: ["BusClient", "BusProtocol", "SQLite", "ShieldBusTestSupport"],
                    exclude: ["attack_suite.py", "curve_attack.py", "sandbox_probe.py"]),
        .testTarget(name: "StudioTests", dependencies: ["Studio", "BusProtocol", "BusTools", "Configuration", "DeviceAPI", "ScreenTime", "ShieldBusTestSupport"],
                    exclude: ["studio_browser_test.py", "studio_page_test.py", "studio_support.py", "conftest.py"]),
        .testTarget(name: "BrokerTests", dependencies: ["Broker", "Configuration", "BusClient", "BusProtocol", "BusTools", "DeviceAPI", "DeviceOS", "ScreenTime", "ZeroMQ", "ShieldBusTestSupport", "fixture-outsider", "fixture-forked-threads", "SQLite", "ShieldBusSDK", "InProcessPlugins", "InMemoryRun", "fixture-in-process", "LockInvariant", "BedtimeExtensions", "ProfilesExtensions", .product(name: "Logging", package: "swift-log")]),

        // Fixtures of the supervision tests (issue 4) and the deep-link tests (issue 6).
        .executableTarget(name: "fixture-supervised", dependencies: ["ShieldBusSDK", "BusClient", "BusProtocol", "ZeroMQ", "FixtureWork"] + appleFrameworks, path: "Tests/Fixtures/SupervisedPlugin", swiftSettings: appleModuleAliases),
        .executableTarget(name: "fixture-deeplink-app", dependencies: ["ShieldBusSDK", "ReferenceKit"] + appleFrameworks, path: "Tests/Fixtures/DeepLinkApp", swiftSettings: appleModuleAliases),
        // The seeds' extension code, compiled with its imports unchanged (issue 24's proof).
        .executableTarget(name: "fixture-seed-product", dependencies: ["ShieldBusSDK"] + appleFrameworks, path: "Tests/Fixtures/SeedProduct",
                          swiftSettings: appleModuleAliases + iOSExtensionCodeMode),
        // A monitor written with Date() and Calendar.current, and its twin on bus time.
        .executableTarget(name: "fixture-wall-clock-product", dependencies: ["ShieldBusSDK", "FixtureWork"] + appleFrameworks, path: "Tests/Fixtures/WallClockProduct",
                          swiftSettings: appleModuleAliases + iOSExtensionCodeMode),
        // An app, a shield and an action delegate run as processes and hosted on a test's threads (issue 30).
        .target(name: "InProcessPlugins", dependencies: ["ShieldBusSDK"], path: "Tests/Fixtures/InProcessPlugins"),
        .executableTarget(name: "fixture-in-process", dependencies: ["ShieldBusSDK", "InProcessPlugins"], path: "Tests/Fixtures/InProcessPlugin"),
        // A configuration's day played in one process: the broker on its in-memory transport, the plugins' programs
        // hosted on threads (issue 30).
        .target(name: "InMemoryRun", dependencies: [
            "Broker", "BusProtocol", "Configuration", "RunPlanning", "ShieldBusSDK", "ReferenceKit", "ShieldRendererExtension", "NotifierExtension",
            "ReportBuilderExtension", "BedtimeExtensions", "ProfilesExtensions", "NaivePluginKit", "ShieldBusTestSupport",
            .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/InMemoryRun"),
        // shieldbus plugin new: new plugins go above this line
    ],
    swiftLanguageModes: [.v6]
)

// Fuzzing targets (libFuzzer), only for `make fuzz`, which sets SHIELDBUS_FUZZ and builds them with -sanitize=fuzzer
// in their own build folder: without libFuzzer's main they are no programs, so ordinary builds never see them.
if ProcessInfo.processInfo.environment["SHIELDBUS_FUZZ"] != nil {
    package.targets += [
        .target(name: "FuzzDriver", path: "Tests/Fuzz/Driver"),
        .executableTarget(name: "fuzz-wire", dependencies: ["BusProtocol", "FuzzDriver"], path: "Tests/Fuzz/WireDecoder"),
        .executableTarget(name: "fuzz-configuration", dependencies: ["Configuration", "FuzzDriver"], path: "Tests/Fuzz/ConfigurationLoader"),
        .executableTarget(name: "fuzz-scenario", dependencies: ["Configuration", "FuzzDriver"], path: "Tests/Fuzz/ScenarioParser"),
    ]
}
