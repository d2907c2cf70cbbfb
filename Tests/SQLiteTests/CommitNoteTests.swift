// Tests of the commit note beside a store, written by many processes at once.
import SQLite
import Foundation
import Synchronization
import XCTest

final class CommitNoteTests: XCTestCase {
    /// The boot a note records is the system's `boot_id`, as Foundation reads and trims it.
    func testTheCurrentBootIsTheSystemsBootID() throws {
        let text = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
        let expected = text.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertFalse(expected.isEmpty)
        XCTAssertEqual(CommitNote.currentBoot, expected)
    }

    /// Writers noting numbers of different lengths at once (9 and 10, 99 and 100, …) never leave a number nobody
    /// committed, and the note keeps the highest. Found by the attack suite: a sound App-Group store refused as
    /// damaged ("holds changes up to #10, but changes up to #80") after "8" was written over "10".
    func testConcurrentNotesNeverGoAheadOfTheHighestCommitted() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sbcommitted-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("group.sqlite").path
        let numbers: [Int64] = [8, 9, 10, 11, 99, 100]
        let writers = 4, notesEach = 3_000
        let finished = Atomic<Int>(0)
        let readsAhead = Mutex<[Int64]>([])
        DispatchQueue.concurrentPerform(iterations: writers + 1) { index in
            guard index < writers else {
                while finished.load(ordering: .acquiring) < writers {
                    if let read = try? CommitNote.read(besides: store), !numbers.contains(read) || read > numbers.max()! {
                        readsAhead.withLock { $0.append(read) }
                    }
                }
                return
            }
            for note in 0..<notesEach { _ = try? CommitNote.note(numbers[(index + note) % numbers.count], besides: store) }
            finished.add(1, ordering: .releasing)
        }
        XCTAssertEqual(readsAhead.withLock { Array($0.prefix(5)) }, [], "numbers nobody noted were read")
        XCTAssertEqual(try CommitNote.read(besides: store), numbers.max(), "the note keeps the highest number")
    }

    /// A note's number is read as `Int64(_: String)` reads its first word (the note is parsed on bytes, at every
    /// commit): a sign, digits, nothing past `Int64`'s range; a note without one says nothing.
    func testANotesNumberIsItsFirstWordAsAnInteger() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sbnoteparse-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("store.sqlite").path
        let notes = ["42", "  42  boot", "+7 x", "-3", "12a", "", " \n ", "9223372036854775807", "9223372036854775808",
                     "-9223372036854775808", "00000000000000000123 b", "\n5\n", "- 5", "+"]
        for text in notes {
            try text.write(toFile: CommitNote.path(besides: store), atomically: false, encoding: .utf8)
            let word = text.split(whereSeparator: { " \n\t\r".contains($0) }).first.map(String.init) ?? ""
            XCTAssertEqual(try CommitNote.read(besides: store), Int64(word), "\(text.debugDescription)")
        }
    }
}
