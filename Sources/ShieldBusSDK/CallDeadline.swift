// CallDeadline: how long a plugin's call waits for its reply — wall time, less the broker's own silence in virtual time.

import BusClient

/// A call waits `callTimeoutMilliseconds` of wall time for its reply. In virtual time the broker's own silence past
/// a heartbeat interval — it did not run: stopped, or starved of CPU on a machine busy with other work — is not
/// counted, as the broker holds no peer to its own stalls: giving up on a silent broker renews the session, and the
/// plugin's return (`plugin.up`, `bus.ready`) would land in the journal by the machine's load. A broker gone for good
/// ends the call otherwise: its successor's new session, or the plugin's exit with it — or, at the latest, the busy
/// limit (`BusyLimit`) from the call's start.
struct CallDeadline {
    private var deadline: Int64
    /// The busy limit past the call's own (`BusyLimit`): a broker silent for longer is not waited for.
    private let latest: Int64
    private let excusesSilence: Bool
    /// When the broker was last heard from, as last looked at.
    private var heard: Int64

    init(milliseconds: Int, now: Int64, excusingBrokerSilence: Bool, lastHeard: Int64) {
        deadline = now + Int64(milliseconds)
        latest = now + BusyLimit.milliseconds(for: Int64(milliseconds))
        excusesSilence = excusingBrokerSilence
        heard = lastHeard
    }

    /// The milliseconds left at `now` (none left: 0 or less), the broker last heard from at `lastHeard`, saying
    /// something at least every `heartbeat` ms while it runs.
    mutating func remaining(now: Int64, lastHeard: Int64, heartbeat: Int64) -> Int64 {
        guard excusesSilence else { return deadline - now }
        // A silence that ended is excused for good; one going on, so far; neither past the busy limit.
        if lastHeard > heard {
            deadline = min(deadline + max(0, lastHeard - heard - heartbeat), latest)
            heard = lastHeard
        }
        return min(deadline + max(0, now - heard - heartbeat), latest) - now
    }
}
