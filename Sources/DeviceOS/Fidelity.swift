import Configuration
import Foundation

/// A fidelity profile: which quirks are on, and the seed of the randomness they use.
public struct Fidelity: Equatable, Sendable {
    /// `faithful` (Apple's documented semantics) or `ios-realistic` (also the seeds' device behaviours).
    public var profile: Profile
    /// The iOS release whose bugs the device reproduces on top of the profile (nil: none).
    public var release: IOSRelease?
    public var quirks: Set<Quirk>
    public var seed: UInt64

    public enum Profile: String, CaseIterable, Codable, Sendable {
        case faithful
        case iosRealistic = "ios-realistic"

        /// The quirks a profile turns on.
        public var quirks: Set<Quirk> {
            switch self {
            case .faithful: return []
            case .iosRealistic: return Set(Quirk.allCases).subtracting(Quirk.outsideProfiles)
            }
        }
    }

    /// The profile's quirks, then the release's bugs, then the configuration's switches (which win).
    public init(profile: Profile, release: IOSRelease? = nil, overrides: [Quirk: Bool] = [:], seed: UInt64 = 1) {
        self.profile = profile
        self.release = release
        var quirks = profile.quirks.union(release?.quirks ?? [])
        for (quirk, on) in overrides {
            if on { quirks.insert(quirk) } else { quirks.remove(quirk) }
        }
        self.quirks = quirks
        self.seed = seed
    }

    public func has(_ quirk: Quirk) -> Bool { quirks.contains(quirk) }
}
