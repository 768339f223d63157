#ifndef CSYSTEM_H
#define CSYSTEM_H

#include <stddef.h>
#include <stdint.h>

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC: one call instead of accept + two fcntl.
/// Returns the new descriptor or -1 with errno set.
int csystem_accept_nonblocking(int fd);

/// Raises the soft limit on open descriptors (RLIMIT_NOFILE) to the hard limit, as far as the kernel allows,
/// and returns the soft limit now in force (LONG_MAX for none, -1 when it cannot be read).
long csystem_raise_descriptor_limit(void);

/// epoll_create1(EPOLL_CLOEXEC).
int csystem_epoll_create(void);

/// Registers, changes or removes `fd` with the given event mask (EPOLLIN etc.); the event's data is the fd.
/// `operation` is 1 add, 2 delete, 3 modify (EPOLL_CTL_*).
int csystem_epoll_control(int epoll, int operation, int fd, uint32_t events);

/// epoll_wait(2) unpacked into two parallel arrays, because struct epoll_event is packed on x86_64.
int csystem_epoll_wait(int epoll, int *_Nonnull fds, uint32_t *_Nonnull events, int capacity, int timeout_ms);

/// The epoll event bits, as plain constants for Swift.
extern const uint32_t csystem_epollin;
extern const uint32_t csystem_epollout;
extern const uint32_t csystem_epollerr;
extern const uint32_t csystem_epollhup;
extern const uint32_t csystem_epollrdhup;

/// eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), used to wake an event loop from another thread.
int csystem_eventfd(void);

/// Raises glibc's heap trim threshold so memory freed after a burst stays for the next one instead of being
/// handed back with madvise(2) and faulted in again (measured: 14% of the ledger writer's time under load).
void csystem_keep_freed_heap(void);

/// Bytes glibc holds free in its arenas (mallinfo2's fordblks): memory freed but not handed back to the kernel.
size_t csystem_heap_free_bytes(void);

/// malloc_trim(0): hands every free page of every arena back to the kernel.
void csystem_trim_heap(void);

/// Installs, for each of the `count` signals, a handler that writes the signal's number (one byte) to a pipe, and
/// returns the pipe's read end (blocking; -1 with errno set on failure). The handler is in place when this
/// returns: a signal sent a moment later is never lost (a dispatch source registers later, on its own thread,
/// and a signal in between met the ignored disposition set before it).
int csystem_signal_pipe(const int *_Nonnull signals, int count);

/// 1 when the process was started with `number` ignored (SIGHUP under nohup), else 0.
int csystem_signal_ignored(int number);

#endif
