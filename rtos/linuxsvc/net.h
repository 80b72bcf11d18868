/*
 * Linux's sockets for rtos threads (docs/linux-services.md, "Sockets"): TCP and UDP over IPv4, carried
 * out by Linux's daemon rtmux-netd on the V-Bus channel `rtmux-net` (lib/netproto.h), through the
 * session of conn.h. The POSIX calls (socket.c) and the C library's read/write/close/fstat
 * (rtos/libc/syscalls.c) hand their socket descriptors here; each function returns as POSIX does (-1,
 * or NULL, with errno on failure).
 *
 * Descriptors LNET_FD_FIRST .. LNET_FD_FIRST + LNET_SOCKETS - 1 are sockets, shared by every thread;
 * files have theirs below (files.h), so one number never means both. Calls on one socket may run in
 * several threads at once (one blocked in recv while another sends); the daemon does the ones on a
 * socket in the order they reach it.
 *
 * Blocking. A blocking call blocks its thread only, as long as POSIX says (for good without
 * SO_RCVTIMEO/SO_SNDTIMEO), as a series of requests each of which Linux holds at most
 * NETP_WAIT_MAX_MS: so a call ends at most that long after the socket is ready, and a Linux that stops
 * answering without closing the channel fails it with EIO within NETP_WAIT_MAX_MS + LSVC_TIMEOUT. When
 * Linux closes the channel (rtmux-netd ended, Linux rebooted or powered off) every call in flight fails
 * with EIO at once, the sockets of that session give EBADF, and new calls fail with ENOTCONN until
 * rtmux-netd is back, then work again.
 *
 * Descriptors LNET_CHAN_FD_FIRST .. + LNET_CHANS - 1 stand for V-Bus channels in poll()
 * (rtmux_chan_fd, <rtmux/poll.h>): readable, writable, hung up as the channel is.
 */
#ifndef RTOS_LINUXSVC_NET_H
#define RTOS_LINUXSVC_NET_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "conn.h"

#define LNET_FD_FIRST      64
#define LNET_SOCKETS       64 /* descriptors 64..127 (the daemon's NETP_SOCKETS_MAX a session) */
#define LNET_CHAN_FD_FIRST 128
#define LNET_CHANS         16 /* descriptors 128..143: channels for poll() */
#define LNET_FD_END        (LNET_CHAN_FD_FIRST + LNET_CHANS)
#define LNET_SLOTS         32 /* requests in flight at once (more wait for one) */

/* Sets up the session (no message is sent until the first call). Run before main (a constructor);
 * the host's tests call it themselves. */
void lnet_init(void);

int lnet_socket(int domain, int type, int protocol);
int lnet_bind(int fd, const struct sockaddr *addr, socklen_t len);
int lnet_listen(int fd, int backlog);
int lnet_connect(int fd, const struct sockaddr *addr, socklen_t len);
int lnet_accept(int fd, struct sockaddr *addr, socklen_t *len);
ssize_t lnet_sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t tolen);
ssize_t lnet_recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *fromlen);
int lnet_shutdown(int fd, int how);
int lnet_setsockopt(int fd, int level, int name, const void *val, socklen_t len);
int lnet_getsockopt(int fd, int level, int name, void *val, socklen_t *len);
int lnet_getsockname(int fd, struct sockaddr *addr, socklen_t *len);
int lnet_getpeername(int fd, struct sockaddr *addr, socklen_t *len);
/* poll() over sockets (asked of Linux), channel descriptors and any other descriptor, whose revents
 * `other` tells (the C library's: the console, Linux's files); waits for all of them at once. */
int lnet_poll(struct pollfd *fds, nfds_t n, int timeout_ms, short (*other)(int fd, short events));

/* For the C library's calls on a descriptor of this range (LNET_FD_FIRST .. LNET_FD_END - 1). */
ssize_t lnet_read(int fd, void *buf, size_t n);
ssize_t lnet_write(int fd, const void *buf, size_t n);
int lnet_close(int fd);
int lnet_fstat(int fd, struct stat *st);
/* fcntl's F_GETFL/F_SETFL (O_NONBLOCK), F_GETFD/F_SETFD (no flag) on a socket. */
int lnet_fcntl(int fd, int cmd, int arg);

/* A descriptor for poll() standing for the channel `ch` (opened by the caller, who keeps it);
 * close() gives the descriptor back, not the channel. */
int lnet_chan_fd(rt_chan_t *ch);

void lnet_stats(struct lsvc_stats *out);

#endif /* RTOS_LINUXSVC_NET_H */
