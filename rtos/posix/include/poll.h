/*
 * poll() (<poll.h>) over sockets, V-Bus channels given a descriptor (<rtmux/poll.h>), the console and
 * Linux's files (docs/linux-services.md, "Sockets"). The bits are Linux's.
 */
#ifndef RTMUX_POLL_H
#define RTMUX_POLL_H

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned int nfds_t;

struct pollfd {
    int fd;        /* a negative one is left out (revents 0) */
    short events;  /* what to wait for */
    short revents; /* what is the case: events, and POLLERR, POLLHUP, POLLNVAL always */
};

#define POLLIN     0x001
#define POLLPRI    0x002
#define POLLOUT    0x004
#define POLLERR    0x008
#define POLLHUP    0x010
#define POLLNVAL   0x020
#define POLLRDNORM 0x040
#define POLLRDBAND 0x080
#define POLLWRNORM 0x100
#define POLLWRBAND 0x200

/* timeout in milliseconds, -1: for good, 0: look only */
int poll(struct pollfd fds[], nfds_t nfds, int timeout);

#ifdef __cplusplus
}
#endif

#endif /* RTMUX_POLL_H */
