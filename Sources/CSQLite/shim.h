// Exposes the system SQLite C API (libsqlite3-dev) to Swift.
#include <sqlite3.h>
