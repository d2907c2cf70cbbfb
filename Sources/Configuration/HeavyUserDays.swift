import Foundation

/// Generated days of a heavy user of the habit-lock product, as scenario text (the soak's and the benchmark's input).
///
/// Pickups every few minutes from 06:30 to 23:00: distracting and other apps opened, shield buttons pressed, web
/// visits, the companion app opened and habits done (or not), the app backgrounded, force-quit, the phone
/// restarted, iOS updated, an app closed. The same seed gives the same text.
public struct HeavyUserDays {
    /// How the day's steps are spaced and drawn.
    public enum Pace: Sendable {
        /// A step every 3–25 minutes, each action drawn independently (the soak's mix).
        case soak
        /// A step every 5–9 minutes (at least 110 a day), actions dealt from a shuffled deck of the same mix, so
        /// that every day has at least 60 app opens and 8 web visits — but no device restarts or iOS updates,
        /// which a person has a few times a year, not a few times a day (the benchmark's heavy-user year).
        case heavy
    }

    public static let distracting = ["Instagram", "TikTok", "YouTube", "Reddit", "Candy Crush", "Clash Royale"]
    public static let other = ["Duolingo", "Kindle", "Spotify", "WhatsApp", "Maps", "Notion"]
    /// The habits done, in this order: the first three the habit-lock product's app offers (Config/habit-lock.yml).
    public static let habits = ["Read", "Walk", "Stretch"]
    public static let sites = ["https://www.instagram.com/explore/", "https://www.reddit.com/r/swift", "https://www.nytimes.com/", "https://github.com/"]

    public var seed: UInt64
    public var days: Int
    public var profile: String
    public var pace: Pace

    public init(seed: UInt64, days: Int, profile: String = "ios-realistic", pace: Pace = .soak) {
        self.seed = seed
        self.days = days
        self.profile = profile
        self.pace = pace
    }

    /// What a generated scenario holds, counted as it was written.
    public struct Counts: Equatable, Sendable {
        public var steps = 0
        /// App opens (the companion app's included) on the day with the fewest.
        public var fewestOpensInADay = Int.max
        /// Web visits on the day with the fewest.
        public var fewestVisitsInADay = Int.max
    }

    /// The scenario, as YAML.
    public var scenario: String { generate().text }

    /// The scenario and what it holds.
    public func generate() -> (text: String, counts: Counts) {
        var random = SeededRandom(seed: seed)
        var counts = Counts()
        var lines = ["name: \(pace == .soak ? "soak" : "heavy-user")-\(seed)", "start: 2026-11-23T06:00", "profile: \(profile)", "seed: \(seed)", "steps:"]
        func step(_ at: String, _ action: String) { lines.append("  - at: \"\(at)\"\n    \(action)") }
        var deck: [Int] = []
        for day in 1...days {
            var minute = 6 * 60 + 30
            var habitsDone = 0, opens = 0, visits = 0
            if pace == .heavy { deck = [] }  // each day deals from a fresh deck
            while minute < 23 * 60 {
                minute += pace == .soak ? Int.random(in: 3...25, using: &random) : Int.random(in: 5...9, using: &random)
                let second = Int.random(in: 0...59, using: &random)
                let at = String(format: "day %d %02d:%02d:%02d", day, minute / 60 % 24, minute % 60, second)
                guard minute < 23 * 60 else { break }
                let roll: Int
                switch pace {
                case .soak: roll = Int.random(in: 0..<100, using: &random)
                case .heavy:
                    if deck.isEmpty { deck = Array(0..<100).shuffled(using: &random) }
                    roll = deck.removeLast()
                }
                counts.steps += 1
                switch roll {
                case 0..<35: step(at, "open: \(Self.distracting.randomElement(using: &random)!)"); opens += 1
                case 35..<50: step(at, "open: \(Self.other.randomElement(using: &random)!)"); opens += 1
                case 50..<58: step(at, "press: \(Bool.random(using: &random) ? "primary" : "secondary")")
                case 58..<66:
                    step(at, "visit: {url: \"\(Self.sites.randomElement(using: &random)!)\", tab: \(Int.random(in: 1...3, using: &random)), private: \(Int.random(in: 0..<4, using: &random) == 0)}")
                    visits += 1
                case 66..<76:
                    step(at, "open: Habit Lock")
                    opens += 1
                    if habitsDone < 3 && Int.random(in: 0..<3, using: &random) > 0 {
                        habitsDone += 1
                        lines.append("  - after: 20s\n    habit: \(Self.habits[habitsDone - 1])")
                    }
                case 76..<88: step(at, "home: true")
                case 88..<92: step(at, "forceQuit: Habit Lock")
                case 92..<95 where pace == .heavy: step(at, "home: true")
                case 92..<94: step(at, "restart: true")
                case 94..<95: step(at, "osUpdate: true")
                default: step(at, "close:")
                }
            }
            counts.fewestOpensInADay = min(counts.fewestOpensInADay, opens)
            counts.fewestVisitsInADay = min(counts.fewestVisitsInADay, visits)
        }
        lines.append("end: day \(days) 23:30")
        return (lines.joined(separator: "\n") + "\n", counts)
    }
}

/// A small, fast, seeded random number generator (SplitMix64): the same seed gives the same run, on every platform.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
