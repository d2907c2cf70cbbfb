// fuzz-scenario: libFuzzer target for the scenario parser, against the shipped app catalog.
// Built only by `make fuzz`; a crash or a hang is a finding, a ConfigurationError is the expected answer.
import Configuration
import Foundation
import FuzzDriver

/// The shipped catalog, found from this file's place in the repository.
let catalog: AppCatalog = {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    guard let catalog = try? AppCatalog.load(path: root.appendingPathComponent("Config/catalog.yml").path) else {
        fatalError("fuzz-scenario needs Config/catalog.yml of the repository it was built in")
    }
    return catalog
}()

func fuzzScenario(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: data == nil ? 0 : size), as: UTF8.self)
    if let document = try? YAMLValue.parse(text, file: "fuzz.yml") {
        _ = try? Scenario.parse(document, catalog: catalog, defaultTimeZone: TimeZone(identifier: "UTC")!)
    }
    return 0
}

runFuzzer(fuzzScenario)
