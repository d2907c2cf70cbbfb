@testable import Configuration
import XCTest
import Yams

/// The plain scalars' types read by hand (`YAMLPlainScalar`) are those Yams' default resolver gives with its patterns.
final class YAMLPlainScalarTests: XCTestCase {
    /// What the default resolver says of a plain scalar written `text`.
    private func resolved(_ text: String) -> Tag.Name { Resolver.default.resolveTag(of: Node(text)) }

    func testWrittenScalarsAreTypedAsTheDefaultResolverTypesThem() {
        let written = [
            "", "~", "null", "Null", "NULL", "nULL", "nil", "<<", "<", "=", "==",
            "yes", "Yes", "YES", "yEs", "no", "No", "NO", "true", "True", "TRUE", "tRue", "false", "False", "FALSE", "on", "On", "ON",
            "off", "Off", "OFF", "y", "n", "truex",
            "0", "00", "07", "08", "0_", "-0", "+0", "0o7", "0o", "0o8", "0b", "0b1", "0b102", "0b_", "-0b1", "0x", "0x1F", "0xg", "-0x_",
            "1", "12", "1_000", "1__", "-12", "+12", "12a", "1:30", "1:60", "1:5", "190:20:30", "1:3:", "1::3", "0:30", "-1:30",
            "1.5", "1.", ".5", "._", "-.5", "+.5", ".", "1e5", "1E+5", "1e", "1.5e-3", ".5e5", ".5e+5", ".5E-5", "1_0.2_5", "1:30.5",
            "1:30.", "1:30", "-1:30.5", ".inf", "-.inf", "+.Inf", ".INF", "inf", ".nan", ".NaN", ".NAN", "+.nan", "-.nan", "nan",
            "2026-11-23", "2026-1-2", "2026-11-23T06:30:00", "2026-11-23t6:30:00", "2026-11-23 06:30:00.5", "2026-11-23  06:30:00Z",
            "2026-11-23T06:30:00 Z", "2026-11-23T06:30:00+1", "2026-11-23T06:30:00-01:00", "2026-11-23T06:30:00+01:0",
            "2026-11-23T06:30", "2026-11-23T06:30:00.", "2026-11-23T06:30:00.123 +05:30", "20261-11-23", "2026-111-23",
            "22:00", "07:00", "06:30", "24:00", "Europe/Berlin", "habit-lock", "leaf.svg", "group.dev.shieldbus.habitlock",
            "https://www.instagram.com/", "reports.*", "a b", "1 2", "+", "-", "_", "0.0.1", "1,000", "½", "١٢",
        ]
        for text in written {
            XCTAssertEqual(YAMLPlainScalar.tagName(plain: text), resolved(text), "'\(text)'")
        }
    }

    func testEveryShortTextOfNumberCharactersIsTypedAsTheDefaultResolverTypesIt() {
        // Every text of up to four characters from those the number, null and timestamp patterns are made of.
        let characters = Array("0159+-._:eExbo~n")
        var texts = [""]
        var frontier = [""]
        for _ in 1...4 {
            frontier = frontier.flatMap { text in characters.map { text + String($0) } }
            texts += frontier
        }
        var differing: [String] = []
        for text in texts where YAMLPlainScalar.tagName(plain: text) != resolved(text) { differing.append(text) }
        XCTAssertEqual(differing, [], "typed otherwise than the default resolver types them")
    }

    func testAQuotedOrTaggedScalarKeepsItsOwnTag() throws {
        let file = try YAMLValue.parse("quoted: '3'\nplain: 3\ntagged: !!str 4\nflag: on\nnothing: ~\nratio: 1.5\n", file: "t.yml")
        XCTAssertEqual(try file.jsonValue(), .object(["quoted": .string("3"), "plain": .int(3), "tagged": .string("4"), "flag": .bool(true),
                                                     "nothing": .null, "ratio": .double(1.5)]))
    }
}
