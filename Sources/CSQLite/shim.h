// Exposes the system SQLite C API (libsqlite3-dev) to Swift.
#include <sqlite3.h>

/// Has each connection's page cache take memory for a page when it first holds one, instead of a first bulk of 20
/// pages that every open writes through (a page fault each in a new process). `sqlite3_config` is variadic, which
/// Swift cannot call. Only before SQLite is initialised in the process (SQLITE_MISUSE after).
static inline int shieldbus_sqlite_page_cache_on_demand(void) { return sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0); }
