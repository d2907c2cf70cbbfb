@testable import DeviceOS
import Foundation
import ShieldBusTestSupport
import SQLite
import XCTest

/// The monitored activities are saved from each registration's kept JSON (re-encoded only when it changed): what is
/// stored must be exactly what encoding the whole list gives, after registrations, interval starts and ends.
final class RegistrationPersistenceTests: XCTestCase {
    func testTheSavedRegistrationsAreTheEncodedListByteForByte() throws {
        let state = TemporaryDirectory(prefix: "sbregs")
        // Past midnight, so that the daily schedules end an interval and begin the next after they were registered.
        let day = "name: day\nstart: 2026-11-23T22:00\nsteps:\n  - at: \"23:30\"\n    habit: Read\nend: day 2 00:30\n"
        let run = try ScenarioRun.run(configuration: try ScenarioRun.shippedConfiguration("habit-lock"), scenario: day, stateDirectory: state.path)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        XCTAssertFalse(run.events("deviceactivity.interval-did-start").isEmpty, "an interval began after the registrations were first saved")

        let path = state.path + "/device.sqlite"
        let stored = try XCTUnwrap(try SQLiteConnection(path: path).withStatement(
            "SELECT json FROM state WHERE key = ?", bindings: [.text(DeviceActivityService.registrationsKey)]) { try $0.step() ? try $0.string(at: 0) : nil })
        let registrations = try XCTUnwrap(try DeviceStateStore(path: path).load([DeviceActivityService.Registration].self,
                                                                                key: DeviceActivityService.registrationsKey))
        XCTAssertGreaterThanOrEqual(registrations.count, 2, stored)
        XCTAssertTrue(registrations.contains { $0.startedInterval != nil }, "an interval's start was saved: \(stored)")

        // The same list saved whole, through the generic encoder, into a store of its own.
        let copy = TemporaryDirectory(prefix: "sbregscopy")
        try DeviceStateStore(path: copy.path + "/device.sqlite").save(registrations, key: "whole")
        let whole = try SQLiteConnection(path: copy.path + "/device.sqlite").withStatement(
            "SELECT json FROM state WHERE key = 'whole'") { try $0.step() ? try $0.string(at: 0) : nil }
        XCTAssertEqual(stored, whole)
    }
}
