#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is `((sqlite3_destructor_type)-1)`, a macro Swift cannot import.
static inline sqlite3_destructor_type _Nonnull csqlite_transient(void) { return SQLITE_TRANSIENT; }
#endif
