#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is `((sqlite3_destructor_type)-1)`, a macro Swift cannot import.
static inline sqlite3_destructor_type _Nonnull csqlite_transient(void) { return SQLITE_TRANSIENT; }

// Statement journals (the pages a statement changed, kept so the statement alone can be undone) stay in memory,
// in SQLite's small default chunks, instead of spilling to a temporary file past 64 KiB. A positive limit would
// also be the size of the journal's first chunk: every writing statement then allocated (and, past glibc's mmap
// threshold, mapped and unmapped) that much. `sqlite3_config` is variadic, which Swift cannot call; it only takes
// effect before the library is initialised (SQLITE_MISUSE after).
static inline int csqlite_keep_statement_journals_in_memory(void) {
    return sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, -1);
}

// Memory statistics take a global mutex on every allocation; linkout never reads them.
static inline int csqlite_skip_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
