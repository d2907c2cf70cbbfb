// Tests of which app catalog a configuration gets when it names none (`DefaultFiles.catalog(for:)`).
import Configuration
import Foundation
import RunPlanning
import ShieldBusTestSupport
import XCTest

final class DefaultCatalogTests: XCTestCase {
    private var folder: String!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("default-catalog-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    /// A configuration in a folder of its own (a project that copied `Config/`, or another checkout's) with the shipped
    /// catalog copied beside it gets that catalog, not an error that every entry is listed twice; a catalog beside it
    /// that differs still adds to the shipped one and is judged as such.
    func testACopyOfTheShippedCatalogBesideAConfigurationIsTheShippedCatalog() throws {
        let shipped = try XCTUnwrap(DefaultFiles.shippedCatalogPath(), "the repository's Config/catalog.yml")
        let configuration = folder + "/mine.yml"
        try String(contentsOfFile: BuildProducts.repositoryRoot.appendingPathComponent("Config/default.yml").path, encoding: .utf8)
            .replacingOccurrences(of: "scenario: scenarios/habit-lock-day.yml\n", with: "")
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: shipped, toPath: folder + "/catalog.yml")
        let catalog = try DefaultFiles.catalog(for: ShieldBusConfiguration.load(path: configuration))
        XCTAssertEqual(catalog.apps.count, try AppCatalog.load(path: shipped).apps.count)

        // One more category makes it a catalog of its own, which adds to the shipped one and may not list it again.
        let changed = try String(contentsOfFile: shipped, encoding: .utf8) + "\n# changed\n"
        try changed.write(toFile: folder + "/catalog.yml", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try DefaultFiles.catalog(for: ShieldBusConfiguration.load(path: configuration))) { error in
            XCTAssertTrue("\(error)".contains("standalone: true"), "\(error)")
        }
    }
}
