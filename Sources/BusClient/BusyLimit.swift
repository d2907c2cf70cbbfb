// BusyLimit: how long virtual time waits, past a limit, for a process still at work — the broker's and the SDK's rule.

/// In virtual time a limit on a process's work (its acknowledgements, its start's hello, its silence, an answer it
/// owes) does not end the wait while the process is still at work: a machine busy with other work runs it late. This is
/// how long the wait goes on then — twelve times the limit or a minute, whichever is longer; one that never gets on is
/// stopped.
public enum BusyLimit {
    public static func milliseconds(for limit: Int64) -> Int64 { max(limit * 12, 60_000) }
}
