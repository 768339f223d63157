#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
// The module map resolves headers next to itself; this shim finds libpq's through pkg-config's -I.
#include <libpq-fe.h>
#include <poll.h>

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

// Whether the server has ended an idle session: its side of the socket is shut (a restart, a terminated backend).
// libpq learns of it only when a call fails, which for a write is too late to repeat it safely. Linux's
// POLLRDHUP reports the peer's shutdown without reading anything; a wait of 0 never blocks.
static inline int clibpq_server_ended(const PGconn *_Nonnull connection) {
    int socket = PQsocket(connection);
    if (socket < 0) return 1;
#ifdef POLLRDHUP
    short hangup = POLLRDHUP;
#else
    short hangup = 0x2000;  // Linux's POLLRDHUP, hidden without _GNU_SOURCE
#endif
    struct pollfd watched = {.fd = socket, .events = hangup};
    return poll(&watched, 1, 0) == 1 && (watched.revents & (hangup | POLLHUP | POLLERR)) != 0;
}
#endif
