// swift-tools-version:5.10
// ShieldBus: Apple's Screen Time architecture as a local ZeroMQ message-bus plugin host.
import PackageDescription

let package = Package(
    name: "ShieldBus",
    products: [
        .executable(name: "shieldbus", targets: ["ShieldBusCLI"]),
        .library(name: "ShieldBusSDK", targets: ["ShieldBusSDK"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", exact: "5.0.1"),
    ],
    targets: [
        // The bus: libzmq, our wrapper over it, the wire protocol, a client connection, the broker.
        .systemLibrary(name: "CZeroMQ", path: "Sources/CZeroMQ", pkgConfig: "libzmq", providers: [.apt(["libzmq3-dev"])]),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        .target(name: "BusProtocol"),
        .target(name: "BusClient", dependencies: ["ZeroMQ", "BusProtocol", .product(name: "Logging", package: "swift-log")]),
        .target(name: "Broker", dependencies: ["ZeroMQ", "BusProtocol", .product(name: "Logging", package: "swift-log")]),
        .target(name: "Configuration", dependencies: ["BusProtocol", "Yams"]),

        // Screen Time's domain model, shared state, and usage reports.
        .target(name: "ScreenTime"),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        .target(name: "AppGroupStore", dependencies: ["SQLite"]),
        .target(name: "UsageReports"),
        .target(name: "DeviceAPI", dependencies: ["ScreenTime"]),
        // The plugin SDK: what plugins depend on (never the broker).
        .target(name: "CProcessControl"),
        .target(name: "ShieldBusSDK", dependencies: [
            "BusClient", "CProcessControl", "BusProtocol", "DeviceAPI", "ScreenTime", "AppGroupStore",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "DeviceOS", dependencies: [
            "Broker", "BusProtocol", "Configuration", "DeviceAPI", "ScreenTime", "SQLite",
            .product(name: "Logging", package: "swift-log"),
        ]),

        .executableTarget(name: "ShieldBusCLI", dependencies: [
            "Broker", "BusClient", "BusProtocol", "Configuration", "DeviceAPI", "DeviceOS", "AppGroupStore", "UsageReports",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // Test support: the broker harness and small fixture processes the tests start.
        .target(name: "ShieldBusTestSupport", dependencies: ["BusClient", "BusProtocol"], path: "Tests/Support"),
        .executableTarget(name: "bus-test-plugin", dependencies: ["BusClient", "BusProtocol"], path: "Tests/Fixtures/BusTestPlugin"),
        .executableTarget(name: "appgroup-stress", dependencies: ["AppGroupStore"], path: "Tests/Fixtures/AppGroupStress"),
        .executableTarget(name: "fixture-shield", dependencies: ["ShieldBusSDK"], path: "Tests/Fixtures/FixtureShield"),
        .executableTarget(name: "fixture-app", dependencies: ["ShieldBusSDK"], path: "Tests/Fixtures/FixtureApp"),

        // The reference plugins (Plugins/), and what they share.
        .target(name: "ReferenceKit", dependencies: ["ShieldBusSDK"], path: "Plugins/ReferenceKit"),
        .executableTarget(name: "report-builder", dependencies: ["ShieldBusSDK", "ReferenceKit", "UsageReports"], path: "Plugins/ReportBuilder"),
        .executableTarget(name: "notifier", dependencies: ["ShieldBusSDK", "ReferenceKit"], path: "Plugins/Notifier"),

        // Benchmarks (run with `make bench`, never as tests).
        .executableTarget(name: "shieldbus-bench", dependencies: ["Broker", "BusClient", "BusProtocol", "ZeroMQ"], path: "Benchmarks/ShieldBusBench"),

        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        .testTarget(name: "BusProtocolTests", dependencies: ["BusProtocol"]),
        .testTarget(name: "ConfigurationTests", dependencies: ["Configuration"]),
        .testTarget(name: "ScreenTimeTests", dependencies: ["ScreenTime"]),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite", "CSQLite"]),
        .testTarget(name: "AppGroupStoreTests", dependencies: ["AppGroupStore", "SQLite", "appgroup-stress"]),
        .testTarget(name: "UsageReportsTests", dependencies: ["UsageReports"]),
        .testTarget(name: "SupervisionTests", dependencies: ["BusClient", "BusProtocol", "ShieldBusTestSupport", "AppGroupStore"]),
        .testTarget(name: "ReportBuilderTests", dependencies: ["BusProtocol", "ShieldBusTestSupport", "UsageReports"]),
        .testTarget(name: "NotifierTests", dependencies: ["BusProtocol", "ShieldBusTestSupport", "ReferenceKit"]),
        .testTarget(name: "DeviceOSTests", dependencies: ["BusProtocol", "ShieldBusTestSupport", "DeviceOS", "ScreenTime"]),
        .testTarget(name: "PythonPluginTests", dependencies: ["BusClient", "BusProtocol", "ShieldBusTestSupport"]),
        .testTarget(name: "BrokerTests", dependencies: ["Broker", "BusClient", "BusProtocol", "ZeroMQ", "ShieldBusTestSupport"]),

        // issue 6: a companion app fixture that follows the notifier's pending deep links.
        .executableTarget(name: "fixture-deeplink-app", dependencies: ["ShieldBusSDK", "ReferenceKit"], path: "Tests/Fixtures/DeepLinkApp"),
    ]
)
