@testable import DeviceOS
import ScreenTime
import ShieldBusTestSupport
import XCTest

/// The tokens the OS issues: each a fact of the seed, the epoch, the kind and the name alone, so that a run and the
/// journals of earlier runs name the same apps with the same tokens.
final class TokenIssuerTests: XCTestCase {
    /// `<kind>.` and the 64-bit FNV-1a hash of `<seed>|<epoch>|<kind>|<name>` in sixteen lowercase hex digits, as the
    /// key is written out in full.
    private static func token(seed: UInt64, epoch: Int, kind: String, name: String) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in "\(seed)|\(epoch)|\(kind)|\(name)".utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return kind + "." + String(repeating: "0", count: 16 - hex.count) + hex
    }

    func testATokenIsTheHashOfItsSeedEpochKindAndName() {
        XCTAssertEqual(TokenIssuer(seed: 7, epoch: 3).application("com.example.a").rawValue, "app.0c43dd40ae5aaef4")
        XCTAssertEqual(TokenIssuer(seed: 0, epoch: 0).category("").rawValue, "cat.293bfdff8eacf1c1")
        XCTAssertEqual(TokenIssuer(seed: .max, epoch: 1).webDomain("exämple.org").rawValue, "web.5d9d6ebd4617d4eb")
        for seed: UInt64 in [0, 1, 2026, .max] {
            for epoch in [0, 1, 12] {
                let issuer = TokenIssuer(seed: seed, epoch: epoch)
                for name in ["", "a", "com.burbn.instagram", "exämple.org"] {
                    XCTAssertEqual(issuer.application(name).rawValue, Self.token(seed: seed, epoch: epoch, kind: "app", name: name))
                    XCTAssertEqual(issuer.category(name).rawValue, Self.token(seed: seed, epoch: epoch, kind: "cat", name: name))
                    XCTAssertEqual(issuer.webDomain(name).rawValue, Self.token(seed: seed, epoch: epoch, kind: "web", name: name))
                }
            }
        }
    }

    /// An OS update's new epoch issues every token of it, in the new epoch's hash, and maps each old one to its new one.
    func testAnUpdateIssuesTheNextEpochsTokens() throws {
        let catalog = try FocusDevice.catalog()
        let issuer = TokenIssuer(seed: 41, epoch: 0)
        issuer.issueAll(for: catalog)
        let app = try XCTUnwrap(catalog.apps.first).bundleIdentifier
        let old = issuer.application(app)
        let migration = issuer.regenerate(for: catalog)
        XCTAssertEqual(issuer.epoch, 1)
        XCTAssertEqual(migration.applications[old]?.rawValue, Self.token(seed: 41, epoch: 1, kind: "app", name: app))
        XCTAssertEqual(issuer.bundleIdentifier(of: ApplicationToken(rawValue: Self.token(seed: 41, epoch: 1, kind: "app", name: app))), app)
        XCTAssertNil(issuer.bundleIdentifier(of: old))
    }
}
