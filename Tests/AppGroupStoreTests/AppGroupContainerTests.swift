// Tests of the container: group names, unknown suites, damaged store files, busy writers.
import AppGroupStore
import CSQLite
import Foundation
import ShieldBusTestSupport
import SQLite
import XCTest

final class AppGroupContainerTests: ContainerTestCase {
    func testCreateGroupIsIdempotentAndListed() throws {
        try adminDefaults().set(1, forKey: "kept")
        try container.createGroup(group)
        try container.createGroup("group.com.example.reports")
        XCTAssertEqual(try container.groups(), ["group.com.example.focus", "group.com.example.reports"])
        XCTAssertEqual(try adminDefaults().integer(forKey: "kept"), 1, "creating an existing group keeps its data")
        XCTAssertEqual(try container.storeURL(forGroup: group).path, root.path + "/group.com.example.focus/Library/Preferences/group.com.example.focus.sqlite",
                       "each group a folder of its own, its defaults where iOS keeps a suite's")
        XCTAssertEqual(try container.groupFolder(group), root.path + "/group.com.example.focus")
        XCTAssertEqual(try AppGroupContainer(root: root.appendingPathComponent("absent")).groups(), [])
        let flat = AppGroupContainer(root: root.appendingPathComponent("flat"), layout: .flat)
        try flat.createGroup("standard")
        XCTAssertEqual(try flat.storeURL(forGroup: "standard").path, root.path + "/flat/standard.sqlite")
        XCTAssertEqual(try flat.groups(), ["standard"])
    }

    /// A state folder kept from when each group was one file beside the others (`<root>/<group>.sqlite`, its log and
    /// note beside it, its files in `<group>.container/`) is moved into the groups' folders with nothing lost.
    func testStoresKeptOneFilePerGroupAreMovedIntoTheirFoldersWithTheirLogAndFiles() throws {
        let old = root.path + "/old", copy = root.path + "/copy"
        let flat = AppGroupContainer(rootPath: old, layout: .flat)
        try flat.createGroup(group)
        let writer = try SharedDefaults(suiteName: group, container: flat, writer: SharedDefaults.administrator)
        _ = try writer.set(42, forKey: "kept")
        // What iOS code keeps in its group's container, in folders named as the store's own.
        let oldContainer = old + "/" + group + ".container"
        try FileManager.default.createDirectory(atPath: oldContainer + "/Library/Caches", withIntermediateDirectories: true)
        try "picture".write(toFile: oldContainer + "/Library/Caches/icon.txt", atomically: true, encoding: .utf8)
        XCTAssertGreaterThan(FileSize.of(try flat.storeURL(forGroup: group).path + "-wal") ?? 0, 0, "the write is in the log")
        // The files as a killed process leaves them (the write in the log, not yet in the store), moved.
        try FileManager.default.copyItem(atPath: old, toPath: copy)
        withExtendedLifetime(writer) {}
        let moved = AppGroupContainer(rootPath: copy)
        XCTAssertEqual(try moved.moveFlatStoresIntoGroupFolders(), [group])
        XCTAssertEqual(try moved.groups(), [group])
        XCTAssertFalse(FileManager.default.fileExists(atPath: copy + "/" + group + ".sqlite"))
        XCTAssertEqual(try SharedDefaults(suiteName: group, container: moved).integer(forKey: "kept"), 42, "the logged write came along")
        XCTAssertEqual(try String(contentsOfFile: moved.groupFolder(group) + "/Library/Caches/icon.txt", encoding: .utf8), "picture")
        XCTAssertFalse(FileManager.default.fileExists(atPath: copy + "/" + group + ".container"))
        XCTAssertEqual(try moved.moveFlatStoresIntoGroupFolders(), [], "nothing left to move")
    }

    /// A move cut short — the container renamed, the store not yet moved; or the log moved and not the store — is
    /// finished by the next one, with nothing lost.
    func testAMoveCutShortIsFinishedByTheNext() throws {
        let old = root.path + "/cut"
        let flat = AppGroupContainer(rootPath: old, layout: .flat)
        try flat.createGroup(group)
        _ = try SharedDefaults(suiteName: group, container: flat, writer: SharedDefaults.administrator).set(7, forKey: "kept")
        let container = AppGroupContainer(rootPath: old)
        // Cut after the container's rename and the log's move.
        let store = try flat.storeURL(forGroup: group).path, target = try container.storeURL(forGroup: group).path
        try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try "kept file".write(toFile: container.groupFolder(group) + "/note.txt", atomically: true, encoding: .utf8)
        if FileManager.default.fileExists(atPath: store + "-wal") { try FileManager.default.moveItem(atPath: store + "-wal", toPath: target + "-wal") }
        XCTAssertEqual(try container.moveFlatStoresIntoGroupFolders(), [group])
        XCTAssertEqual(try SharedDefaults(suiteName: group, container: container).integer(forKey: "kept"), 7)
        XCTAssertEqual(try String(contentsOfFile: container.groupFolder(group) + "/note.txt", encoding: .utf8), "kept file")
    }

    /// A link in a group's folder — which every process of the group may write — is refused by whoever opens the
    /// group, so that no process that sees every group (the broker, the command line) is led to another's store.
    func testASymbolicLinkInAGroupsFolderIsRefused() throws {
        let other = "group.com.example.other"
        try container.createGroup(other)
        let preferences = try (container.storeURL(forGroup: group).path as NSString).deletingLastPathComponent
        try FileManager.default.removeItem(atPath: preferences)
        try FileManager.default.createSymbolicLink(atPath: preferences, withDestinationPath: "../../\(other)/Library/Preferences")
        for open in [{ _ = try self.container.createGroup(self.group) }, { _ = try self.container.slices(group: self.group) }] {
            assertStoreError(try open()) { error in
                XCTAssertTrue("\(error)".contains("\(preferences) is a symbolic link"), "\(error)")
            }
        }
    }

    /// Every part of a store is checked, in both layouts: a link planted at any of its files or folders is refused
    /// at each open, naming it; a store reached through a link above the container's root is not refused (the root
    /// is the owner's choice), and a missing group is still an unknown suite.
    func testASymbolicLinkAtAnyPartOfAStoreIsRefusedNamingIt() throws {
        let decoy = root.path + "/decoy"
        FileManager.default.createFile(atPath: decoy, contents: nil)
        for layout in [AppGroupContainer.Layout.groupContainers, .flat] {
            let folder = root.path + (layout == .flat ? "/flat" : "/groups")
            let container = AppGroupContainer(rootPath: folder, layout: layout)
            try container.createGroup(group)
            let store = try container.storeURL(forGroup: group).path
            var parts = StoreFiles.suffixes.map { store + $0 }
            if layout == .groupContainers {
                parts += [folder + "/" + group + "/Library/Preferences", folder + "/" + group + "/Library", folder + "/" + group]
            }
            for part in parts {
                let moved = part + ".kept"
                let existed = FileManager.default.fileExists(atPath: part)
                if existed { try FileManager.default.moveItem(atPath: part, toPath: moved) }
                try FileManager.default.createSymbolicLink(atPath: part, withDestinationPath: existed ? moved : decoy)
                for open in [{ _ = try container.createGroup(self.group) }, { _ = try container.slices(group: self.group) }] {
                    assertStoreError(try open()) { error in
                        XCTAssertTrue("\(error)".contains("\(part) is a symbolic link"), "\(part): \(error)")
                    }
                }
                try FileManager.default.removeItem(atPath: part)
                if existed { try FileManager.default.moveItem(atPath: moved, toPath: part) }
            }
            XCTAssertEqual(try container.slices(group: group), [:], "with the links gone, the store opens again")
            let linkedRoot = root.path + "/linked-" + (layout == .flat ? "flat" : "groups")
            try FileManager.default.createSymbolicLink(atPath: linkedRoot, withDestinationPath: folder)
            XCTAssertEqual(try AppGroupContainer(rootPath: linkedRoot, layout: layout).slices(group: group), [:], "the root may be reached through a link")
            XCTAssertThrowsError(try container.slices(group: "group.com.example.never")) { error in
                guard case AppGroupStoreError.unknownSuite = error else { return XCTFail("\(error)") }
            }
        }
    }

    /// A group kept both ways is a choice for its owner, not one for the program: refused, naming both files.
    func testAGroupKeptBothWaysIsRefusedNamingBothFiles() throws {
        try container.createGroup(group)
        try AppGroupContainer(root: root, layout: .flat).createGroup(group)
        XCTAssertThrowsError(try container.moveFlatStoresIntoGroupFolders()) { error in
            XCTAssertTrue("\(error)".contains(root.path + "/" + group + ".sqlite") && "\(error)".contains("/Library/Preferences/"), "\(error)")
        }
    }

    /// A group whose storage refuses now may open later; a wrong name or a damaged store will not.
    func testOnlyAStorageRefusalIsStorageUnavailable() {
        let full = SQLiteError.failed(code: SQLITE_FULL, extendedCode: SQLITE_FULL, message: "database or disk is full", sql: nil, path: "/g.sqlite")
        XCTAssertTrue(AppGroupStoreError.storage(group: group, full).isStorageUnavailable)
        XCTAssertTrue(AppGroupStoreError.busy(group: group, timeout: 1).isStorageUnavailable)
        XCTAssertFalse(AppGroupStoreError.unknownSuite(name: "group.lost", existing: [group]).isStorageUnavailable)
        XCTAssertFalse(AppGroupStoreError.corruptStore(path: "/g.sqlite", detail: "quick_check").isStorageUnavailable)
    }

    func testStoreUsesWriteAheadLogging() throws {
        let db = try SQLiteConnection(path: container.storeURL(forGroup: group).path)
        let mode = try db.prepare("PRAGMA journal_mode")
        XCTAssertTrue(try mode.step())
        XCTAssertEqual(try mode.string(at: 0), "wal")
    }

    func testInvalidGroupNamesAreRejected() throws {
        let cases = ["": "empty", "group/evil": "slash", "group\\evil": "slash", "../escape": "slash", "group focus": "whitespace",
                     "group.tab\t": "whitespace", ".hidden": "starts with", "grüppe": "contains",
                     "group.old.sqlite": "ends in '.sqlite'", "group.old.container": "ends in '.container'"]
        for (name, reason) in cases {
            assertStoreError(try container.createGroup(name)) { error in
                guard case .invalidGroupName(name, let found) = error else { return XCTFail("unexpected \(error)") }
                XCTAssertTrue(found.contains(reason), "\(name): \(found)")
            }
            assertStoreError(try SharedDefaults(suiteName: name, container: container)) { error in
                guard case .invalidGroupName = error else { return XCTFail("unexpected \(error)") }
            }
        }
        XCTAssertEqual(try container.groups(), [group])
    }

    func testUnknownSuiteListsGroupsAndSuggestsTheClosest() throws {
        try container.createGroup("group.com.example.reports")
        assertStoreError(try SharedDefaults(suiteName: "group.com.exmaple.focus", container: container)) { error in
            guard case .unknownSuite(let name, let existing) = error else { return XCTFail("unexpected \(error)") }
            XCTAssertEqual(name, "group.com.exmaple.focus")
            XCTAssertEqual(existing, ["group.com.example.focus", "group.com.example.reports"])
            let message = "\(error)"
            XCTAssertTrue(message.contains("Did you mean 'group.com.example.focus'?"), message)
            XCTAssertTrue(message.contains("group.com.example.focus, group.com.example.reports"), message)
        }
        assertStoreError(try SharedDefaults(suiteName: "zzz", container: container)) { error in
            XCTAssertFalse("\(error)".contains("Did you mean"), "no suggestion for an unrelated name: \(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("zzz").path),
                       "opening an unknown suite creates nothing")
    }

    func testGarbageStoreIsCorruptAndLeftUntouched() throws {
        let url = try storeFileURL("group.com.example.broken")
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: url)
        assertStoreError(try SharedDefaults(suiteName: "group.com.example.broken", container: container)) { error in
            guard case .corruptStore(url.path, _) = error else { return XCTFail("unexpected \(error)") }
            let message = "\(error)"
            XCTAssertTrue(message.contains("Restore it from a backup"), message)
            XCTAssertTrue(message.contains("move it aside"), message)
        }
        assertStoreError(try container.createGroup("group.com.example.broken")) { error in
            guard case .corruptStore = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertEqual(try Data(contentsOf: url), garbage)
        XCTAssertFalse(FileManager.default.fileExists(atPath: url.path + "-wal"))
    }

    func testStoreFailingQuickCheckIsCorrupt() throws {
        let defaults = try adminDefaults()
        try defaults.transaction { tx in
            for index in 0..<400 {
                try tx.set(String(repeating: "token-\(index)-", count: 4), forKey: "key-\(index)")
            }
        }
        let url = try container.storeURL(forGroup: group)
        // Fold the WAL into the main file, then overwrite the b-tree header of every page after the first.
        try SQLiteConnection(path: url.path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        var damaged = try Data(contentsOf: url)
        let pageSize = Int(damaged[16]) << 8 | Int(damaged[17])
        for page in stride(from: pageSize, to: damaged.count, by: pageSize) {
            damaged.replaceSubrange(page..<page + 8, with: repeatElement(0xA5, count: 8))
        }
        try damaged.write(to: url)

        assertStoreError(try adminDefaults()) { error in
            guard case .corruptStore(url.path, let detail) = error else { return XCTFail("unexpected \(error)") }
            XCTAssertFalse(detail.isEmpty)
        }
        XCTAssertEqual(try Data(contentsOf: url), damaged)
    }

    /// A store whose write-ahead log was lost — deleted, or zeroed — while it held committed changes opens older
    /// without a word from SQLite: it is refused as damaged, naming the log, and left as it is. Copies of the file
    /// taken while a connection holds the log stand for the store after the loss.
    /// Holds the store open, so that its write-ahead log is not checkpointed away at the close.
    private var keptOpen: SharedDefaults?

    /// The group's store with two changes, the second committed to its write-ahead log only (kept open).
    private func storeWithAChangeInItsLogOnly() throws -> URL {
        let defaults = try adminDefaults()
        keptOpen = defaults
        try defaults.set(1, forKey: "first")
        let url = try container.storeURL(forGroup: group)
        try SQLiteConnection(path: url.path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try defaults.set(true, forKey: "isCurrentlyUnlocked")  // committed, in the log only
        return url
    }

    func testAStoreThatLostItsWriteAheadLogIsRefusedAsDamaged() throws {
        let url = try storeWithAChangeInItsLogOnly()
        for (index, lose) in ["deleted", "zeroed"].enumerated() {
            let other = "group.com.example.copy\(index)"
            let copy = try storeFileURL(other)
            try FileManager.default.copyItem(at: url, to: copy)
            try FileManager.default.copyItem(atPath: url.path + "-committed", toPath: copy.path + "-committed")
            if lose == "zeroed" {
                let size = (try FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? Int) ?? 4096
                try Data(count: size).write(to: URL(fileURLWithPath: copy.path + "-wal"))
            }
            let before = try Data(contentsOf: copy)
            assertStoreError(try SharedDefaults(suiteName: other, container: container)) { error in
                guard case .corruptStore(copy.path, let detail) = error else { return XCTFail("\(lose): unexpected \(error)") }
                XCTAssertTrue(detail.contains("write-ahead log (\(copy.lastPathComponent)-wal) was deleted or damaged"), "\(lose): \(detail)")
            }
            XCTAssertEqual(try Data(contentsOf: copy), before, "\(lose): the store is left as it was")
        }
        // The store itself, closed and opened again, holds everything: nothing is refused.
        XCTAssertEqual(try adminDefaults().bool(forKey: "isCurrentlyUnlocked"), true)
    }

    /// A power cut under `synchronous = NORMAL`: the store as the disk held it at its last flush — the log's header
    /// without the frames of the change after it — beside a note from the machine's boot before. Not damage: the store
    /// opens without the change the power cut took, its note comes down to the store's last change, and its first
    /// opener is told what was lost (the broker creating the groups says it on the bus; a plugin in its log and as
    /// `state.call-failed`); a later opener finds nothing to say.
    func testAStoreThatAPowerCutLeftBehindItsNoteOpens() throws {
        let url = try storeWithAChangeInItsLogOnly()
        let other = "group.com.example.power-cut", copy = try storeFileURL(other)
        try FileManager.default.copyItem(at: url, to: copy)
        try Data(try Data(contentsOf: URL(fileURLWithPath: url.path + "-wal")).prefix(32)).write(to: URL(fileURLWithPath: copy.path + "-wal"))
        let note = try String(contentsOfFile: url.path + "-committed", encoding: .utf8)
        let boot = try XCTUnwrap(CommitNote.currentBoot, "the system names no boot")
        try note.replacingOccurrences(of: boot, with: "00000000-0000-0000-0000-000000000000").write(toFile: copy.path + "-committed", atomically: false, encoding: .utf8)
        let opened = try SharedDefaults(suiteName: other, container: container, writer: SharedDefaults.administrator)
        XCTAssertEqual(opened.restartLoss, "\(copy.path) lost its last 1 committed write(s) with the machine's restart (a power cut or an operating-system crash: not yet flushed to the disk); going on with what it holds")
        XCTAssertNil(try SharedDefaults(suiteName: other, container: container).restartLoss, "said once, by the first opener")
        XCTAssertEqual(try opened.integer(forKey: "first"), 1)
        XCTAssertNil(try opened.entry(forKey: "isCurrentlyUnlocked"), "the change the power cut took")
        XCTAssertEqual(try CommitNote.reading(besides: copy.path), CommitNote.Reading(number: 1, boot: boot))
    }

    /// The broker creates the groups at start, so it is the first opener after a power cut: `createGroup` returns the loss.
    func testCreatingAGroupThatAPowerCutSetBackSaysWhatItLost() throws {
        let url = try storeWithAChangeInItsLogOnly()
        let other = "group.com.example.power-cut", copy = try storeFileURL(other)
        try FileManager.default.copyItem(at: url, to: copy)
        try Data(try Data(contentsOf: URL(fileURLWithPath: url.path + "-wal")).prefix(32)).write(to: URL(fileURLWithPath: copy.path + "-wal"))
        let boot = try XCTUnwrap(CommitNote.currentBoot, "the system names no boot")
        let note = try String(contentsOfFile: url.path + "-committed", encoding: .utf8)
        try note.replacingOccurrences(of: boot, with: "00000000-0000-0000-0000-000000000000").write(toFile: copy.path + "-committed", atomically: false, encoding: .utf8)
        XCTAssertEqual(try container.createGroup(other), "\(copy.path) lost its last 1 committed write(s) with the machine's restart (a power cut or an operating-system crash: not yet flushed to the disk); going on with what it holds")
        XCTAssertNil(try container.createGroup(other), "said once, by the first opener")
    }

    /// A note that cannot be written (here a folder in its place, which even root cannot write as a file) leaves every
    /// commit standing and is said once, through `onNoteFailure`, until a note is written again; every 32nd change is
    /// flushed to the disk, whichever process makes it, bounding what a power cut can take.
    func testANoteThatCannotBeWrittenIsSaidAndEveryThirtySecondChangeIsFlushed() throws {
        let defaults = try adminDefaults()
        let note = try container.storeURL(forGroup: group).path + "-committed"
        var said: [String] = []
        defaults.onNoteFailure = { said.append($0) }
        try defaults.set(1, forKey: "a")
        try FileManager.default.removeItem(atPath: note)
        try FileManager.default.createDirectory(atPath: note, withIntermediateDirectories: false)
        try defaults.set(2, forKey: "a")
        try defaults.set(3, forKey: "a")
        XCTAssertEqual(said.count, 1, "said once: \(said)")
        XCTAssertTrue(said.first?.contains("cannot write the commit note \(note): Is a directory; its commits stand") == true, "\(said)")
        XCTAssertEqual(try defaults.integer(forKey: "a"), 3, "the commits stand")
        try FileManager.default.removeItem(atPath: note)
        try defaults.set(4, forKey: "a")
        XCTAssertEqual(try CommitNote.read(besides: note.replacingOccurrences(of: "-committed", with: "")), try defaults.lastChangeNumber())
        XCTAssertEqual(said.count, 1)
        // Each of two writers makes the change past the next multiple of 32: each flushes it (its first flush).
        let other = try adminDefaults(), interval = CommitFollowUp.syncInterval
        for (writer, multiple) in [(defaults, 1), (other, 2)] {
            while try defaults.lastChangeNumber() < interval * Int64(multiple) { try writer.set(multiple, forKey: "b") }
        }
        waitUntil("the 32nd change flushed by its writer") { defaults.syncedThrough == interval }
        waitUntil("whichever process makes the change, it is flushed") { other.syncedThrough == 2 * interval }
    }

    func testWriterWaitingPastBusyTimeoutGetsBusyError() throws {
        let holder = try SQLiteConnection(path: container.storeURL(forGroup: group).path)
        try holder.execute("BEGIN IMMEDIATE")
        let impatient = AppGroupContainer(root: root, busyTimeout: 0.05)
        let defaults = try SharedDefaults(suiteName: group, container: impatient, writer: SharedDefaults.administrator)
        assertStoreError(try defaults.set(1, forKey: "k")) { error in
            guard case .busy(group, 0.05) = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertNil(try defaults.entry(forKey: "k"), "reads go on while another process writes")
        try holder.execute("COMMIT")
        XCTAssertEqual(try defaults.set(1, forKey: "k").version, 1)
    }
}
