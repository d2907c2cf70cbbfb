// Heartbeats: the broker's heartbeats to its sessions, sent a slice at a time, and the round in which silent peers are found.

import BusProtocol

/// Every session gets a heartbeat once per interval, but a slice of them at a time, round the list (at most 20 at
/// once, every 10 ms at the most): thousands of sessions make no burst of sends that everyone's messages wait behind.
/// Once per interval the broker also looks for peers that fell silent (`isRoundDue`).
struct Heartbeats {
    /// `bus.heartbeatMs`.
    let interval: Int64
    private var lastRound: Int64 = 0
    private var lastSlice: Int64
    private var cursor = 0
    private var owed = 0.0

    init(interval: Int64, now: Int64) {
        self.interval = interval
        lastSlice = now
    }

    /// How often a slice goes out with `sessions` sessions.
    func sliceInterval(sessions: Int) -> Int64 {
        max(10, min(interval, interval * 20 / Int64(max(1, sessions))))
    }

    /// When the loop must be awake next for heartbeats (wall ms).
    func nextDue(sessions: Int) -> Int64 {
        min(lastRound + interval, lastSlice + sliceInterval(sessions: sessions))
    }

    /// Sends the heartbeats that have come due since the last slice (`time`: the bus time they carry), continuing
    /// round `sessions`.
    mutating func sendDue(now: Int64, to sessions: [Session], time: () -> BusTime, send: ([[UInt8]], Session) -> Void) {
        let elapsed = now - lastSlice
        guard elapsed >= sliceInterval(sessions: sessions.count) || elapsed >= interval else { return }
        lastSlice = now
        guard !sessions.isEmpty else { return }
        owed = min(Double(sessions.count), owed + Double(sessions.count) * Double(elapsed) / Double(interval))
        guard owed >= 1 else { return }
        let frames = WireCodec.encode(.heartbeat(time: time()))
        while owed >= 1 {
            if cursor >= sessions.count { cursor = 0 }
            send(frames, sessions[cursor])
            cursor += 1
            owed -= 1
        }
    }

    /// Whether a round of liveness checks is due (once per interval); if so, it starts now.
    mutating func isRoundDue(now: Int64) -> Bool {
        guard now - lastRound >= interval else { return false }
        lastRound = now
        return true
    }
}
