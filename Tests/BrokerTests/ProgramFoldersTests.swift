@testable import Broker
import Foundation
import ShieldBusTestSupport
import XCTest

/// The folders a sandbox shows for a plugin's program (`PluginSandbox.programFolders`): where it is run from and where
/// its file is, its links resolved, the folders of the files its arguments name, and its RUNPATH's.
final class ProgramFoldersTests: XCTestCase {
    func testTheProgramsFoldersAreWhereItIsNamedAndWhereItsFileIsAndWhereItsArgumentsAre() throws {
        let root = TemporaryDirectory(prefix: "sbprog")
        let files = FileManager.default
        let real = PluginSandbox.realPath(root.path)!
        for folder in ["real", "named", "scripts"] { try files.createDirectory(atPath: root.file(folder), withIntermediateDirectories: true) }
        try "#!/bin/sh\n".write(toFile: root.file("real/prog"), atomically: false, encoding: .utf8)
        try files.createSymbolicLink(atPath: root.file("named/prog"), withDestinationPath: root.file("real/prog"))
        try files.createSymbolicLink(atPath: root.file("linked"), withDestinationPath: root.file("named"))
        try "print()\n".write(toFile: root.file("scripts/run.py"), atomically: false, encoding: .utf8)

        let folders = PluginSandbox.programFolders(executable: root.file("linked/prog"), arguments: ["-u", root.file("scripts/../scripts/run.py"), "/usr/bin/env", "/no/such/file"])
        XCTAssertEqual(folders, [real + "/named", real + "/real", root.path + "/scripts"])
    }

    func testPathsAreStandardizedAsWrittenAndTheirFoldersTaken() {
        XCTAssertEqual(PluginSandbox.standardized("/a/./b//c/../d/"), "/a/b/d")
        XCTAssertEqual(PluginSandbox.standardized("/../a"), "/a")
        XCTAssertEqual(PluginSandbox.standardized("/"), "/")
        XCTAssertEqual(PluginSandbox.folder(of: "/a/b/prog"), "/a/b")
        XCTAssertEqual(PluginSandbox.folder(of: "/prog"), "/")
    }

    func testTheRunPathsOriginIsTheProgramsFolder() {
        XCTAssertEqual(ELFRunPath.expandingOrigin(in: "$ORIGIN", origin: "/p"), "/p")
        XCTAssertEqual(ELFRunPath.expandingOrigin(in: "${ORIGIN}/../lib", origin: "/p"), "/p/../lib")
        XCTAssertEqual(ELFRunPath.expandingOrigin(in: "/opt/$ORIGINAL/$x/$ORIGIN", origin: "/p"), "/opt//pAL/$x//p")
        XCTAssertEqual(ELFRunPath.expandingOrigin(in: "/usr/lib/swift/linux", origin: "/p"), "/usr/lib/swift/linux")
    }

    func testTheHostsTopFoldersAreLinksWhereTheyAreLinks() {
        for (top, target) in PluginSandbox.topFolders {
            XCTAssertEqual(target, try? FileManager.default.destinationOfSymbolicLink(atPath: top), top)
        }
    }
}
