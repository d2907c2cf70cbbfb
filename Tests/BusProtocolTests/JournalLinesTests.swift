import Configuration
import XCTest
@testable import BusProtocol

/// A journal read line by line from its bytes: the same envelopes as decoding each line alone, empty lines skipped,
/// and the first line that is not an envelope named by its number.
final class JournalLinesTests: XCTestCase {
    func envelope(_ n: Int) -> Envelope {
        Envelope(seq: UInt64(n), time: 1_795_332_199_588 + Int64(n), topic: "app.ping", source: "tester", corr: n % 3 == 0 ? "c\(n)" : nil,
                 body: Array(#"{"n":\#(n),"s":"line\\n \#(n) ü"}"#.utf8))
    }

    func testGeneratedJournalsReadBackToTheirEnvelopes() throws {
        var random = SeededRandom(seed: 2026_1124)
        for round in 0..<200 {
            let envelopes = (0..<Int.random(in: 0...30, using: &random)).map(envelope)
            // Blank lines anywhere, a final newline or not.
            var text: [UInt8] = []
            for encoded in envelopes.map(WireCodec.encodeEnvelope) {
                if Int.random(in: 0...4, using: &random) == 0 { text.append(0x0A) }
                text += encoded + [0x0A]
            }
            if Bool.random(using: &random), text.last == 0x0A { text.removeLast() }
            XCTAssertEqual(try JournalLines.envelopes(in: text), envelopes, "round \(round)")
        }
    }

    func testAnEnvelopeNotInTheBrokersOwnFieldOrderIsStillRead() throws {
        let text = Array(#"{"body":{"n":1},"topic":"app.ping","source":"tester","v":1,"seq":4,"time":9}"#.utf8)
        XCTAssertEqual(try JournalLines.envelopes(in: text), [Envelope(seq: 4, time: 9, topic: "app.ping", source: "tester", body: Array(#"{"n":1}"#.utf8))])
    }

    func testTheFirstBadLineIsNamedByItsNumberAndNothingAfterItIsRead() {
        let good = WireCodec.encodeEnvelope(envelope(1))
        let text = good + [0x0A, 0x0A] + good + [0x0A] + Array(#"{"v":1,"seq":"#.utf8) + [0x0A] + good
        var read = 0
        XCTAssertThrowsError(try JournalLines.forEach(in: text) { _ in read += 1 }) { error in
            XCTAssertEqual((error as? JournalLines.BadLine)?.line, 4)
            XCTAssertTrue("\(error)".hasPrefix("line 4: not a journal line: "), "\(error)")
        }
        XCTAssertEqual(read, 2)
    }

    /// A journal a killed process was writing: a last line without its newline is torn and left unread, even one
    /// that reads whole (the broker cuts it off too); a bad line anywhere else — the last one included when its
    /// newline was written — is damage, named by its number.
    func testOnlyATornLastLineIsLeftUnread() throws {
        let good = WireCodec.encodeEnvelope(envelope(1))
        let torn = Array(#"{"v":1,"seq":"#.utf8)
        for journal in [good + [0x0A] + good + [0x0A] + torn, good + [0x0A] + good + [0x0A] + good] {
            var read = 0
            try JournalLines.forEachUpToATornEnd(in: journal) { _ in read += 1 }
            XCTAssertEqual(read, 2)
        }
        for (damaged, line) in [(good + [0x0A] + torn + [0x0A] + good, 2), (good + [0x0A] + torn + [0x0A], 2), (torn + [0x0A] + good + [0x0A] + torn, 1)] {
            XCTAssertThrowsError(try JournalLines.forEachUpToATornEnd(in: damaged) { _ in }) { error in
                XCTAssertEqual((error as? JournalLines.BadLine)?.line, line)
            }
        }
    }
}
