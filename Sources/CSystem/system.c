#include "CSystem.h"

#include <malloc.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

const uint32_t csystem_epollin = EPOLLIN;
const uint32_t csystem_epollout = EPOLLOUT;
const uint32_t csystem_epollerr = EPOLLERR;
const uint32_t csystem_epollhup = EPOLLHUP;
const uint32_t csystem_epollrdhup = EPOLLRDHUP;

int csystem_accept_nonblocking(int fd) {
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
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
