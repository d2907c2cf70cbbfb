import XCTest
@testable import ScreenTime

final class ShieldAppearanceTests: XCTestCase {
    func testColorHexForms() throws {
        XCTAssertEqual(ShieldColor.systemBlue.hex, "#007AFFFF")
        XCTAssertEqual(ShieldColor.clear.hex, "#00000000")
        XCTAssertEqual(ShieldColor(hex: "#007aff"), .systemBlue, "six digits mean opaque; case doesn't matter")
        XCTAssertEqual(ShieldColor(hex: "141A2980"), ShieldColor(0x14, 0x1A, 0x29, 0x80))
        for bad in ["", "#12345", "#1234567", "#GG0000", "#+12345", "#123456789"] {
            XCTAssertNil(ShieldColor(hex: bad), bad)
        }
        XCTAssertThrowsError(try decodeJSON(ShieldColor.self, "\"blue\"")) { error in
            XCTAssertTrue("\(error)".contains("is not a color"), "\(error)")
        }
    }

    func testColorFromFractionsRoundsAndClamps() {
        XCTAssertEqual(ShieldColor(red: 0.08, green: 0.10, blue: 0.16), ShieldColor(20, 26, 41))
        XCTAssertEqual(ShieldColor(white: 0.75), ShieldColor(191, 191, 191))
        XCTAssertEqual(ShieldColor(red: 2, green: -1, blue: 0.5, alpha: 0.5), ShieldColor(255, 0, 128, 128))
        XCTAssertEqual(ShieldColor.gray.hex, "#808080FF")
    }

    func testDefaultShieldIsGrayRestrictedWithOneButton() {
        let shield = ShieldConfiguration.default
        XCTAssertEqual(shield.title?.text, "Restricted")
        XCTAssertEqual(shield.primaryButtonLabel?.text, "OK")
        XCTAssertNil(shield.secondaryButtonLabel)
        let background = shield.backgroundColor!
        XCTAssertTrue(background.red == background.green && background.green == background.blue, "gray")
    }

    func testSystemDefaultsFillOnlyWhatIsMissing() {
        let custom = ShieldConfiguration(backgroundColor: .black, title: .init(text: "Focus time", color: .white))
        let drawn = custom.withSystemDefaults()
        XCTAssertEqual(drawn.backgroundColor, .black)
        XCTAssertEqual(drawn.title?.text, "Focus time")
        XCTAssertEqual(drawn.subtitle, ShieldConfiguration.default.subtitle)
        XCTAssertEqual(drawn.primaryButtonLabel, ShieldConfiguration.default.primaryButtonLabel)
        XCTAssertEqual(drawn.backgroundBlurStyle, ShieldConfiguration.default.backgroundBlurStyle)
        XCTAssertNil(drawn.secondaryButtonLabel, "a nil secondary button means a single button")
        XCTAssertNil(drawn.icon)
        let twoButtons = ShieldConfiguration(secondaryButtonLabel: .init(text: "Open for 5 minutes", color: .gray)).withSystemDefaults()
        XCTAssertEqual(twoButtons.secondaryButtonLabel?.text, "Open for 5 minutes")
    }

    func testFamilyControlsErrorMessages() {
        XCTAssertEqual(FamilyControlsError.allCases.count, 9)
        for error in FamilyControlsError.allCases {
            XCTAssertTrue(error.description.hasSuffix("."), "\(error)")
            XCTAssertEqual(error.errorDescription, error.description)
        }
        XCTAssertEqual(FamilyControlsError.authorizationConflict.description,
                       "Another authorized app already provides parental controls on this device; revoke it first.")
        XCTAssertEqual((FamilyControlsError.invalidAccountType as Error).localizedDescription, FamilyControlsError.invalidAccountType.description)
    }
}
