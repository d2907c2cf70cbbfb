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

    /// The color read from its string's bytes is the one the `Character` reading (the form below) made, on the forms
    /// that are colors and on near misses: non-ASCII digits and marks, signs, spaces, a `#` that a mark joins.
    func testColorHexReadsWhatTheCharacterReadingRead() {
        func characterReading(_ hex: String) -> ShieldColor? {
            let digits = hex.hasPrefix("#") ? hex.dropFirst() : Substring(hex)
            guard digits.count == 6 || digits.count == 8, digits.allSatisfy(\.isHexDigit), let value = UInt32(digits, radix: 16) else { return nil }
            let rgba = digits.count == 6 ? value << 8 | 0xFF : value
            return ShieldColor(UInt8(rgba >> 24 & 0xFF), UInt8(rgba >> 16 & 0xFF), UInt8(rgba >> 8 & 0xFF), UInt8(rgba & 0xFF))
        }
        let forms = [
            "#141A29FF", "#338ce6ff", "#FFFFFF", "000000", "#00000000", "aBcDeF12", "#0123456789", "#", "##123456", "#12345G",
            "#+12345", "+1234567", "-1234567", "#12345\u{0661}", "#\u{FF11}23456", "#\u{301}123456", "#123456\u{301}", "\u{FF03}123456",
            " #123456", "#123456 ", "#12 456", "#123456\n", "#1234567", "0x123456", "#\u{1F600}12345", "#\r\n12345", "ＦＦＦＦＦＦ",
        ]
        for form in forms {
            XCTAssertEqual(ShieldColor(hex: form), characterReading(form), form.debugDescription)
        }
        func padded(_ digits: String, to count: Int) -> String { String(repeating: "0", count: count - digits.count) + digits }
        for value in stride(from: 0, through: 0xFF_FF_FF, by: 0x01_07_0B) {
            for form in [padded(String(value, radix: 16, uppercase: true), to: 6), "#" + padded(String(value, radix: 16), to: 6),
                         "#" + padded(String(value << 8 | 0x7F, radix: 16), to: 8)] {
                XCTAssertEqual(ShieldColor(hex: form), characterReading(form), form)
                XCTAssertNotNil(ShieldColor(hex: form), form)
            }
        }
        XCTAssertEqual(ShieldColor(hex: "#141A29FF"), ShieldColor(0x14, 0x1A, 0x29, 0xFF), "a color reads")
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
