import Foundation

/// The slow lane: `SHIELDBUS_SLOW_TESTS=1` (`make test-slow`) runs every variation of a regression day and the tests
/// that build a copy of the package; `make test` runs a fixed slice of the variations, so that every test still runs
/// and CI stays well under its time limit.
public enum SlowLane {
    public static var isOn: Bool { ProcessInfo.processInfo.environment["SHIELDBUS_SLOW_TESTS"] == "1" }

    /// Every item in the slow lane; otherwise every ninth, from the first (always at least one). Variations are listed
    /// instant by instant and profile by profile: an odd stride keeps both profiles in the slice.
    public static func slice<Item>(_ items: [Item]) -> [Item] {
        isOn ? items : items.enumerated().filter { $0.offset % stride == 0 }.map(\.element)
    }

    /// One in how many variations `make test` plays: what keeps its process lane within its time.
    public static let stride = 9
}
