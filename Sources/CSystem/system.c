#include "CSystem.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>

const uint32_t csystem_epollin = EPOLLIN;
const uint32_t csystem_epollout = EPOLLOUT;
const uint32_t csystem_epollerr = EPOLLERR;
const uint32_t csystem_epollhup = EPOLLHUP;
const uint32_t csystem_epollrdhup = EPOLLRDHUP;

int csystem_accept_nonblocking(int fd) {
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

long csystem_raise_descriptor_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
    if (limit.rlim_cur < limit.rlim_max) {
        struct rlimit raised = limit;
        raised.rlim_cur = limit.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
    }
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > (rlim_t)LONG_MAX) return LONG_MAX;
    return (long)limit.rlim_cur;
}

int csystem_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int csystem_epoll_control(int epoll, int operation, int fd, uint32_t events) {
    struct epoll_event event;
    event.events = events;
    event.data.fd = fd;
    return epoll_ctl(epoll, operation, fd, &event);
}

int csystem_epoll_wait(int epoll, int *fds, uint32_t *events, int capacity, int timeout_ms) {
    struct epoll_event buffer[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epoll, buffer, capacity, timeout_ms);
    for (int i = 0; i < count; i++) {
        fds[i] = buffer[i].data.fd;
        events[i] = buffer[i].events;
    }
    return count;
}

int csystem_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

void csystem_keep_freed_heap(void) {
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
    mallopt(M_MMAP_THRESHOLD, 16 * 1024 * 1024);
}

size_t csystem_heap_free_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return info.fordblks;
}

void csystem_trim_heap(void) {
    malloc_trim(0);
}

/// The pipe's write end, set once before any handler is installed.
static int csystem_signal_write_end = -1;

/// Async-signal-safe: one write(2), errno kept. The write end does not block: a flood of signals drops bytes
/// once the pipe is full, and the first is what counts.
static void csystem_signal_handler(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    ssize_t written = write(csystem_signal_write_end, &byte, 1);
    (void)written;
    errno = saved;
}

int csystem_signal_pipe(const int *signals, int count) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return -1;
    if (fcntl(ends[1], F_SETFL, O_NONBLOCK) != 0) return -1;
    csystem_signal_write_end = ends[1];
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = csystem_signal_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (int i = 0; i < count; i++) {
        if (sigaction(signals[i], &action, NULL) != 0) return -1;
    }
    return ends[0];
}

int csystem_signal_ignored(int number) {
    struct sigaction current;
    if (sigaction(number, NULL, &current) != 0) return 0;
    return current.sa_handler == SIG_IGN ? 1 : 0;
}
