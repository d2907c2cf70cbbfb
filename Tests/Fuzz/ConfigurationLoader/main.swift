// fuzz-configuration: libFuzzer target for the configuration loader (YAML through Yams, then validation).
// Built only by `make fuzz`; a crash or a hang is a finding, a ConfigurationError is the expected answer.
import Configuration
import Foundation
import FuzzDriver

func fuzzConfiguration(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: data == nil ? 0 : size), as: UTF8.self)
    if let document = try? YAMLValue.parse(text, file: "fuzz.yml") {
        _ = try? ShieldBusConfiguration.parse(document)
        _ = try? AppCatalog.parse(document)
    }
    return 0
}

runFuzzer(fuzzConfiguration)
