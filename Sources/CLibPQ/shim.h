#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
// The module map resolves headers next to itself; this shim finds libpq's through pkg-config's -I.
#include <libpq-fe.h>

// PG_DIAG_SQLSTATE is a character macro Swift imports as a string; the field code libpq wants is its int.
static inline int clibpq_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }

static void clibpq_ignore_notice(void *arg, const char *message) {
    (void)arg;
    (void)message;
}

// Notices ("relation already exists, skipping") would go to stderr; the ledger reports errors itself.
static inline void clibpq_silence_notices(PGconn *_Nonnull connection) {
    PQsetNoticeProcessor(connection, clibpq_ignore_notice, 0);
}
#endif
