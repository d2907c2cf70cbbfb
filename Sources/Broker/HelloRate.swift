// HelloRate: how many hellos outside clients of one credential may send — a token bucket per credential.

/// Connecting costs the broker a session, a welcome and, for a plugin, two announcements: a client that connects and
/// disconnects in a loop must not take the broker from everyone else. Each credential outside clients present (the
/// cookie, the tool credential, an allowlisted key) has a bucket of hellos that refills at a steady rate; a hello
/// from an empty bucket is refused `too-many-hellos`, which costs almost nothing. Supervised plugins are not limited:
/// their launches are the broker's own.
struct HelloRate {
    /// Hellos a credential may send at once after a quiet spell.
    static let burst = 200
    /// Hellos per second a credential may keep sending.
    static let perSecond = 20

    private var tokens: [Bool: (count: Double, at: Int64)] = [:]

    /// Takes a hello's token for the credential kind (`actsForPerson`: the tool credential), if one is left.
    mutating func take(actsForPerson: Bool, now: Int64) -> Bool {
        var bucket = tokens[actsForPerson] ?? (Double(Self.burst), now)
        bucket.count = min(Double(Self.burst), bucket.count + Double(now - bucket.at) * Double(Self.perSecond) / 1_000)
        bucket.at = now
        let taken = bucket.count >= 1
        if taken { bucket.count -= 1 }
        tokens[actsForPerson] = bucket
        return taken
    }
}
