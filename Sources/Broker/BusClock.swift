import BusProtocol
import Foundation

/// The bus clock: the only source of time plugins ever see.
public protocol BusClock: AnyObject {
    /// `real`, `scaled` or `virtual`.
    var mode: String { get }
    /// Bus time now.
    func now() -> BusTime
}

/// Bus time is wall-clock time.
public final class RealClock: BusClock {
    public init() {}
    public var mode: String { "real" }
    public func now() -> BusTime { BusTime((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
