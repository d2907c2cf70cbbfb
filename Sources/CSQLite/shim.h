// Exposes the system SQLite C API (libsqlite3-dev) to Swift, with the few C calls the SQLite module needs beside it.
#include <sqlite3.h>

/// SQLite's one-time set-up in a process: each connection's page cache takes memory for a page when it first holds
/// one, instead of a first bulk of 20 pages that every open writes through (a page fault each in a new process); no
/// count of the memory SQLite uses is kept (`SQLITE_CONFIG_MEMSTATUS`: counting takes a process-wide lock and asks the
/// allocator each block's size at every allocation and free — thousands in a launch's opens and compiles — and only
/// `sqlite3_memory_used`, `sqlite3_status` and the heap limits read it, none of which ShieldBus uses); then SQLite
/// initialises (its mutexes, allocator, built-in functions and file systems), as its first open would.
/// `sqlite3_config` is variadic, which Swift cannot call, and acts only before the initialisation: called again (a
/// launch forked from a template that set SQLite up), it is refused with SQLITE_MISUSE and the initialisation is
/// found made, so nothing changes.
static inline int shieldbus_sqlite_set_up(void) {
    (void)sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    return sqlite3_initialize();
}

#include <sys/vfs.h>

/// The file system type (`statfs`'s `f_type`, linux/magic.h) of the file `descriptor` is open on; 0 when unknown.
/// Swift's Glibc module does not export `fstatfs`.
static inline long shieldbus_file_system_type(int descriptor) {
    struct statfs system;
    return fstatfs(descriptor, &system) == 0 ? (long)system.f_type : 0;
}
