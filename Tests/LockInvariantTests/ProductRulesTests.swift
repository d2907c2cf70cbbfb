import Configuration
import Foundation
import LockInvariant
import XCTest

/// The products' promises as the checker reads them from configurations.
final class ProductRulesTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    var catalog: AppCatalog { get throws { try AppCatalog.load(path: Self.root.appendingPathComponent("Config/catalog.yml").path) } }

    func testEveryProductOfTheTwoProductConfiguration() throws {
        let configuration = try ShieldBusConfiguration.load(path: Self.root.appendingPathComponent("Config/two-products.yml").path)
        let checker = try LockInvariantChecker(configuration: configuration, catalog: try catalog)
        XCTAssertEqual(checker.products.map(\.name), ["habit-lock", "speed-bump"])
        XCTAssertEqual(checker.products[0].promise.locked.always, true)
        XCTAssertEqual(checker.products[0].promise.unlocks, [Promise.Unlock(earned: .habits(3), minutes: 30)])
        XCTAssertEqual(checker.products[1].promise.locked.dailyUse?.minutes, 30)
        XCTAssertEqual(checker.products[1].promise.locked.dailyUse?.dismiss, .primary)
        XCTAssertEqual(checker.products.map(\.stores), [["habit-lock"], ["speed-bump"]])
        XCTAssertEqual(checker.products.map(\.ownsEveryStore), [false, false])
        XCTAssertEqual(checker.products[1].selectedApps, ["Facebook", "X", "Snapchat"])
        XCTAssertEqual(checker.timeZone.identifier, "Europe/Berlin")
    }

    func testTheShippedSingleProductConfigurations() throws {
        for file in ["habit-lock", "focus-window", "speed-bump", "default", "naive-habit-lock"] {
            let configuration = try ShieldBusConfiguration.load(path: Self.root.appendingPathComponent("Config/\(file).yml").path)
            let products = try LockInvariantChecker(configuration: configuration, catalog: try catalog).products
            XCTAssertEqual(products.count, 1, file)
            XCTAssertEqual(products.map(\.stores), [["lock"]])
            XCTAssertEqual(products.map(\.ownsEveryStore), [true])
        }
        let focus = try ShieldBusConfiguration.load(path: Self.root.appendingPathComponent("Config/focus-window.yml").path)
        XCTAssertEqual(focus.promise?.locked.windows.map(\.start), [9 * 3600, 14 * 3600])
        XCTAssertEqual(focus.promise?.passes.map(\.appsOnly), [true])
    }

    func testAConfigurationWithoutAPromiseHasNothingToCheck() throws {
        let configuration = try ShieldBusConfiguration.load(path: Self.root.appendingPathComponent("Config/report-demo.yml").path)
        XCTAssertEqual(try LockInvariantChecker(configuration: configuration, catalog: try catalog).products.count, 0)
        XCTAssertFalse(ProductRules.undeclared(in: configuration).isEmpty)
    }

    func testEveryRuleKindIsRead() throws {
        let text = """
        promise:
          graceSeconds: 120
          locked:
            windows:
              - {name: night, start: "22:30", end: "06:30", days: [mon, tue, wed, thu, sun]}
              - {start: "13:00", end: "14:00", dates: ["2026-12-24"], strict: true}
            sessions:
              - {name: deep-work, start: start-focus, stop: stop-focus, minutes: 60, strict: true}
          unlocks:
            - {appAction: earned-time, minutes: 10}
          passes:
            - {button: secondary, minutes: 5, for: target, cap: 2, capPer: window}
          overrides:
            - {appAction: skip-tonight, effect: skip-window}
            - {appAction: end-early, effect: end-window}
            - {appAction: pause, effect: pause, minutes: 15}
        """
        let promise = try XCTUnwrap(ShieldBusConfiguration.parse(YAMLValue.parse(text, file: "p.yml")).promise)
        XCTAssertEqual(promise.grace, 120)
        XCTAssertEqual(promise.locked.windows.first?.weekdays, [1, 2, 3, 4, 0])
        XCTAssertEqual(promise.locked.windows.first?.end, 6 * 3600 + 30 * 60)
        XCTAssertEqual(promise.locked.windows.last?.dates, ["2026-12-24"])
        XCTAssertEqual(promise.locked.sessions.first?.strict, true)
        XCTAssertEqual(promise.passes.first?.cap, 2)
        XCTAssertEqual(promise.overrides.map(\.effect), [.skipWindow, .endWindow, .pause(minutes: 15)])
        XCTAssertEqual(promise.appActions, ["earned-time", "start-focus", "stop-focus", "skip-tonight", "end-early", "pause"])
        let hinted = try XCTUnwrap(ShieldBusConfiguration.parse(YAMLValue.parse("""
            promise:
              model: mine
              explore: {appActions: [go], repeatedPresses: {button: primary, times: 4}, windows: [{start: "21:00", end: "07:00"}]}
            """, file: "p.yml")).promise)
        XCTAssertEqual(hinted.appActions, ["go"])
        XCTAssertEqual(hinted.hints.repeatedPresses?.times, 4)
        XCTAssertEqual(hinted.hints.repeatedPresses?.apartMinutes, 6)
        XCTAssertEqual(hinted.hints.windows.map(\.start), [21 * 3600])
    }

    func testAMistakeInAPromiseNamesFileLineAndKey() throws {
        for (text, expected) in [
            ("promise:\n  locked: {windows: [{start: \"25:00\", end: \"02:00\"}]}\n", "p.yml:2:"),
            ("promise:\n  locked: sometimes\n", "expected `always`"),
            ("promise:\n  unlocks: [{habits: 3, minutes: 30}]\n", "a promise needs a lock"),
            ("promise:\n  locked: always\n  passes: [{button: tertiary, minutes: 5}]\n", "expected one of primary, secondary"),
            ("promise:\n  locked: always\n  overrides: [{appAction: skip, effect: skip-window}]\n", "need a window that is not strict"),
            ("promise:\n  model: mine\n  locked: always\n", "either `model` or the rules"),
            ("promise:\n  locked: {windows: [{start: \"22:00\", end: \"06:00\", days: [monkey]}]}\n", "expected a weekday"),
            ("promise:\n  locked: always\n  unlcks: []\n", "did you mean 'unlocks'"),
            ("promise:\n  locked: {sessions: [{start: go}]}\n", "a session ends"),
            ("promise:\n  locked: {windows: [{start: \"22:00\", end: \"06:00\", days: [someday]}]}\n", "expected a weekday"),
        ] {
            XCTAssertThrowsError(try ShieldBusConfiguration.parse(YAMLValue.parse(text, file: "p.yml")), text) { error in
                XCTAssertTrue("\(error)".hasPrefix("p.yml:"), "\(error)")
                XCTAssertTrue("\(error)".contains(expected), "\(text): \(error)")
            }
        }
        let products = "products:\n  - {name: a, plugins: [m], stores: {lock: m}}\nplugins:\n  - {name: m, executable: m, role: monitor}\npromise: {locked: always}\n"
        XCTAssertThrowsError(try ShieldBusConfiguration.parse(YAMLValue.parse(products, file: "p.yml"))) { error in
            XCTAssertTrue("\(error)".contains("each product declares its own promise"), "\(error)")
        }
    }
}
