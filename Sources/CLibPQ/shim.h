#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
// The module map resolves headers next to itself; this shim finds libpq's through pkg-config's -I.
#include <libpq-fe.h>
#include <errno.h>
#include <poll.h>
#include <time.h>

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

// Waits until the server's answer has arrived whole (libpq no longer busy), at most `milliseconds`: 1 when it
// has, 0 when the time ran out, -1 when the connection failed (PQgetResult then says how). A server that stalls
// (a frozen host, an I/O stall) answers nothing, and its statement_timeout, which it enforces itself, never fires.
static inline int clibpq_await_answer(PGconn *_Nonnull connection, int milliseconds) {
    while (PQisBusy(connection)) {
        if (milliseconds <= 0) return 0;
        struct pollfd watched = {.fd = PQsocket(connection), .events = POLLIN};
        struct timespec before, after;
        clock_gettime(CLOCK_MONOTONIC, &before);
        int ready = poll(&watched, 1, milliseconds);
        clock_gettime(CLOCK_MONOTONIC, &after);
        milliseconds -= (int)((after.tv_sec - before.tv_sec) * 1000 + (after.tv_nsec - before.tv_nsec) / 1000000);
        if (ready < 0 && errno != EINTR) return -1;
        if (ready > 0 && !PQconsumeInput(connection)) return -1;
    }
    return 1;
}
#endif
