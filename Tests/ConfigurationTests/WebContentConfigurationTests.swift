import Configuration
import XCTest

/// `device.webLimits` and `device.restrictedDomains`: Screen Time's own web settings in a configuration.
final class WebContentConfigurationTests: XCTestCase {
    func parse(_ text: String) throws -> ShieldBusConfiguration {
        try ShieldBusConfiguration.parse(YAMLValue.parse(text, file: "test.yml"))
    }

    func testReadsLimitsAndRestrictions() throws {
        let configuration = try parse("device:\n  webLimits: {reddit.com: 30, news.ycombinator.com: 15}\n  restrictedDomains: [poki.com]\n")
        XCTAssertEqual(configuration.device.webLimits, ["reddit.com": 30, "news.ycombinator.com": 15])
        XCTAssertEqual(configuration.device.restrictedDomains, ["poki.com"])
    }

    func testRefusesBadDomainsAndLimits() {
        for (text, message) in [
            ("device:\n  webLimits: {Reddit.com: 30}\n", "a domain is written in lowercase"),
            ("device:\n  webLimits: {reddit.com: 0}\n", "a web limit is 1 to 1439 minutes a day, got 0"),
            ("device:\n  webLimits: {reddit.com: 1440}\n", "a web limit is 1 to 1439 minutes a day"),
            ("device:\n  restrictedDomains: [\"https://poki.com\"]\n", "expected a bare hostname"),
        ] {
            XCTAssertThrowsError(try parse(text), text) { error in
                XCTAssertTrue("\(error)".contains(message), "\(error)")
                XCTAssertTrue("\(error)".hasPrefix("test.yml:2:"), "\(error)")
            }
        }
    }
}
