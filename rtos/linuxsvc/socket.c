/*
 * The POSIX socket calls, poll(), fcntl() and the address conversions of <arpa/inet.h> for rtos
 * applications (docs/linux-services.md, "Sockets"): sockets are Linux's, through net.c; the C library's
 * read, write, close and fstat reach net.c for them too (rtos/libc/syscalls.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "files.h"
#include "net.h"
#include "rtmux/poll.h"

int socket(int domain, int type, int protocol)
{
    return lnet_socket(domain, type, protocol);
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    return lnet_bind(fd, addr, len);
}

int listen(int fd, int backlog)
{
    return lnet_listen(fd, backlog);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    return lnet_connect(fd, addr, len);
}

int accept(int fd, struct sockaddr *restrict addr, socklen_t *restrict len)
{
    return lnet_accept(fd, addr, len);
}

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    return lnet_sendto(fd, buf, n, flags, NULL, 0);
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t tolen)
{
    return lnet_sendto(fd, buf, n, flags, to, tolen);
}

ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    return lnet_recvfrom(fd, buf, n, flags, NULL, NULL);
}

ssize_t recvfrom(int fd, void *restrict buf, size_t n, int flags, struct sockaddr *restrict from,
                 socklen_t *restrict fromlen)
{
    return lnet_recvfrom(fd, buf, n, flags, from, fromlen);
}

int shutdown(int fd, int how)
{
    return lnet_shutdown(fd, how);
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    return lnet_setsockopt(fd, level, name, val, len);
}

int getsockopt(int fd, int level, int name, void *restrict val, socklen_t *restrict len)
{
    return lnet_getsockopt(fd, level, name, val, len);
}

int getsockname(int fd, struct sockaddr *restrict addr, socklen_t *restrict len)
{
    return lnet_getsockname(fd, addr, len);
}

int getpeername(int fd, struct sockaddr *restrict addr, socklen_t *restrict len)
{
    return lnet_getpeername(fd, addr, len);
}

/* The revents of a descriptor that is neither a socket nor a channel: 0 (stdin) is readable at its
 * end, 1 and 2 (the console) are writable, Linux's files are always both (POSIX: regular files never
 * block), anything else is no open descriptor. */
static short other_revents(int fd, short events)
{
    if (fd == STDIN_FILENO) {
        return (short)(events & (POLLIN | POLLRDNORM));
    }
    if (fd == STDOUT_FILENO || fd == STDERR_FILENO) {
        return (short)(events & (POLLOUT | POLLWRNORM));
    }
    if (fd >= LFS_FD_FIRST && fd < LFS_FD_FIRST + LFS_FILES) {
        errno = 0;
        if (lseek(fd, 0, SEEK_CUR) >= 0 || errno != EBADF) { /* open (a directory says EINVAL) */
            return (short)(events & (POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM));
        }
    }
    return POLLNVAL;
}

int poll(struct pollfd fds[], nfds_t n, int timeout)
{
    int saved = errno;
    int r = lnet_poll(fds, n, timeout, other_revents);
    if (r >= 0) {
        errno = saved; /* other_revents' look at a file leaves errno as it was */
    }
    return r;
}

int rtmux_chan_fd(struct rt_chan *ch)
{
    return lnet_chan_fd(ch);
}

int fcntl(int fd, int cmd, ...)
{
    int arg = 0;
    if (cmd == F_SETFL || cmd == F_SETFD) {
        va_list ap;
        va_start(ap, cmd);
        arg = va_arg(ap, int);
        va_end(ap);
    }
    if (fd >= LNET_FD_FIRST && fd < LNET_FD_END) {
        return lnet_fcntl(fd, cmd, arg);
    }
    errno = fd < 0 ? EBADF : EINVAL; /* sockets only, for now (docs/linux-services.md) */
    return -1;
}

/* ------------------------------------------------------------------------------ <arpa/inet.h> */

/* A dotted quad "a.b.c.d", each part decimal 0..255 without a leading zero (as inet_pton wants). */
static bool parse_quad(const char *s, uint8_t out[4])
{
    for (unsigned i = 0; i < 4; i++) {
        if (*s < '0' || *s > '9') {
            return false;
        }
        unsigned v = 0, digits = 0;
        const char *start = s;
        while (*s >= '0' && *s <= '9' && digits < 4) {
            v = v * 10u + (unsigned)(*s - '0');
            s++;
            digits++;
        }
        if (v > 255 || digits > 3 || (digits > 1 && *start == '0')) {
            return false;
        }
        out[i] = (uint8_t)v;
        if (i < 3 && *s++ != '.') {
            return false;
        }
    }
    return *s == '\0';
}

int inet_pton(int af, const char *restrict src, void *restrict dst)
{
    if (af != AF_INET) {
        errno = EAFNOSUPPORT;
        return -1;
    }
    uint8_t a[4];
    if (src == NULL || !parse_quad(src, a)) {
        return 0;
    }
    memcpy(dst, a, 4); /* network byte order: the bytes in the order written */
    return 1;
}

const char *inet_ntop(int af, const void *restrict src, char *restrict dst, socklen_t size)
{
    if (af != AF_INET) {
        errno = EAFNOSUPPORT;
        return NULL;
    }
    const uint8_t *a = src;
    char buf[INET_ADDRSTRLEN];
    size_t n = 0;
    for (unsigned i = 0; i < 4; i++) {
        unsigned v = a[i];
        if (v >= 100) {
            buf[n++] = (char)('0' + v / 100);
        }
        if (v >= 10) {
            buf[n++] = (char)('0' + v / 10 % 10);
        }
        buf[n++] = (char)('0' + v % 10);
        buf[n++] = i < 3 ? '.' : '\0';
    }
    if (size < n) {
        errno = ENOSPC;
        return NULL;
    }
    memcpy(dst, buf, n);
    return dst;
}

in_addr_t inet_addr(const char *s)
{
    struct in_addr a;
    return inet_pton(AF_INET, s, &a) == 1 ? a.s_addr : INADDR_NONE;
}

char *inet_ntoa(struct in_addr in)
{
    static char buf[INET_ADDRSTRLEN]; /* POSIX: may be overwritten by the next call */
    return (char *)inet_ntop(AF_INET, &in, buf, sizeof(buf));
}
