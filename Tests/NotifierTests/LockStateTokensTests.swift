import Configuration
import Foundation
import ReferenceKit
import ShieldBusSDK
import ShieldBusTestSupport
import XCTest

/// The saved selection's tokens (base64 of a JSON array) read back as `JSONDecoder` reads them, over a real store.
final class LockStateTokensTests: XCTestCase {
    let folder = TemporaryDirectory(prefix: "lockstate")
    let group = "group.test.lockstate"
    var container: AppGroupContainer { AppGroupContainer(root: URL(fileURLWithPath: folder.path)) }

    override func setUpWithError() throws {
        try container.createGroup(group)
    }

    func store() throws -> SharedDefaults {
        try SharedDefaults(suiteName: group, container: container, writer: SharedDefaults.administrator)
    }

    /// Stores `json` (base64) as each list and reads the lock state.
    func read(_ json: String) throws -> BlockList {
        let defaults = try store()
        let text = Data(json.utf8).base64EncodedString()
        for key in [SharedKey.globalSerializedTokens, SharedKey.globalSerializedCategoryTokens, SharedKey.globalSerializedWebDomainTokens] {
            try defaults.set(text, forKey: key)
        }
        return try LockState.read(from: defaults).blockList
    }

    func testSerializedTokensReadBack() throws {
        let apps: Set<ApplicationToken> = [ApplicationToken(rawValue: "app-1"), ApplicationToken(rawValue: "ü/é,\"x\"")]
        let defaults = try store()
        try defaults.set(try LockState.serialize(apps), forKey: SharedKey.globalSerializedTokens)
        try defaults.set(try LockState.serialize(Set<WebDomainToken>()), forKey: SharedKey.globalSerializedWebDomainTokens)
        let read = try LockState.read(from: defaults).blockList
        XCTAssertEqual(read, BlockList(applications: apps))
    }

    /// The stored text is `JSONEncoder`'s for the sorted tokens, base64: over drawn lists of plain tokens (written
    /// without it) and of tokens it escapes or that are not ASCII (left to it).
    func testSerializedTokensAreJSONEncodersBytes() throws {
        let pieces = ["app-1", "tok-AbC_123==", "a b", "~!@#$%^&*()[]{}|;:',.<>?`", "", "x/y", "q\"", "b\\s", "é", "\u{7F}", "\t", "日本", "\u{1F}"]
        var random = SeededRandom(seed: 7)
        for _ in 0..<2_000 {
            let tokens = Set((0..<Int.random(in: 0...5, using: &random)).map { _ in
                ApplicationToken(rawValue: (0..<Int.random(in: 1...3, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined())
            })
            let expected = try JSONEncoder().encode(tokens.sorted()).base64EncodedString()
            XCTAssertEqual(try LockState.serialize(tokens), expected, "\(tokens.sorted())")
        }
    }

    /// Each list gives the tokens `JSONDecoder` reads from it, or, where `JSONDecoder` refuses it, `undecodableTokens`.
    func testEveryListReadsAsJSONDecoderReadsIt() throws {
        let texts = [#"["a","b","a"]"#, "[]", #" [ "a" , "b" ] "#, #"["\u0061","a\/b"]"#, #"["é"]"#, "[\"e\u{301}\"]",
                     #"["a",1]"#, #"{"a":"b"}"#, #"["a",]"#, #""a""#, "[\"a\"", "null", #"["a"]x"#, #"[["a"]]"#]
        var refused = 0
        for json in texts {
            guard let decoded = try? JSONDecoder().decode([String].self, from: Data(json.utf8)) else {
                refused += 1
                XCTAssertThrowsError(try read(json), json) { error in
                    guard case LockStateError.undecodableTokens? = error as? LockStateError else { return XCTFail("\(json): \(error)") }
                }
                continue
            }
            let read = try read(json)
            XCTAssertEqual(Set(read.applications.map(\.rawValue)), Set(decoded), json)
            XCTAssertEqual(Set(read.categories.map(\.rawValue)), Set(decoded), json)
            XCTAssertEqual(Set(read.webDomains.map(\.rawValue)), Set(decoded), json)
        }
        XCTAssertGreaterThan(refused, 4, "bad lists are among the texts")
    }
}
