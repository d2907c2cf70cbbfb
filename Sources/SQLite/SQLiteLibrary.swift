// SQLiteLibrary: SQLite's one-time set-up in a process, which a plugin's launch template makes for all its launches.
import CSQLite

/// What SQLite sets up once per process, before its first connection: each connection's page cache takes memory for
/// a page when it first holds one, instead of a bulk of 20 pages that every open writes through — a short-lived
/// extension's launch opens two stores and holds a few pages of each (docs/benchmarks.md, "Explore and
/// launches") —, SQLite keeps no count of its memory (a lock at every allocation), then it initialises itself. A
/// plugin's launch template (`LaunchTemplateWarmUp`) makes it before it forks, so that no launch makes it again: what
/// it leaves is process-wide memory only (SQLite's mutexes, unlocked, its built-in functions and file systems), no
/// descriptor, thread or randomness (SQLite seeds its generator at its first use, in the launch).
public enum SQLiteLibrary {
    /// Sets SQLite up, if it is not: a later call changes nothing.
    public static func setUp() { _ = shieldbus_sqlite_set_up() }
}
