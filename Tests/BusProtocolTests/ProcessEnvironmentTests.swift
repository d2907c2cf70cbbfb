import BusClient
import Foundation
import XCTest

/// `ProcessEnvironment.current` must give exactly what `ProcessInfo.environment` gives: the plugins' SDK and the bus
/// connection read their launch settings (credential, state folder, app group, runtime directory) through it.
final class ProcessEnvironmentTests: XCTestCase {
    func testItReadsTheSameVariablesAsFoundation() {
        XCTAssertEqual(ProcessEnvironment.current, ProcessInfo.processInfo.environment)
    }

    func testAValueWithEqualsSignsAndNonASCIITextIsKeptWhole() {
        assertReadsBack("a=b==c ünïcödé ✓")
    }

    func testAnEmptyValueIsAnEmptyString() {
        assertReadsBack("")
    }

    /// Sets a variable of this test's own to `value` and reads it back, beside the rest of the environment.
    private func assertReadsBack(_ value: String, line: UInt = #line) {
        let name = "SHIELDBUS_TEST_ENVIRONMENT_\(getpid())"
        setenv(name, value, 1)
        defer { unsetenv(name) }
        XCTAssertEqual(ProcessEnvironment.current[name], value, line: line)
        XCTAssertEqual(ProcessEnvironment.current, ProcessInfo.processInfo.environment, line: line)
    }
}
