// Exposes the system SQLite C API (libsqlite3-dev) to Swift.
#include <sqlite3.h>

/// SQLite's one-time set-up in a process: each connection's page cache takes memory for a page when it first holds
/// one, instead of a first bulk of 20 pages that every open writes through (a page fault each in a new process); then
/// SQLite initialises (its mutexes, allocator, built-in functions and file systems), as its first open would.
/// `sqlite3_config` is variadic, which Swift cannot call, and acts only before the initialisation: called again (a
/// launch forked from a template that set SQLite up), it is refused with SQLITE_MISUSE and the initialisation is
/// found made, so nothing changes.
static inline int shieldbus_sqlite_set_up(void) {
    (void)sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
    return sqlite3_initialize();
}
