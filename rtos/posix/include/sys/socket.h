/*
 * Sockets (The Open Group Base Specifications Issue 7, <sys/socket.h>): TCP and UDP over IPv4, carried
 * out by Linux (docs/linux-services.md, "Sockets"). The C library has no <sys/socket.h> for a platform
 * like this one. The numbers are Linux's, so code and habits carry over; what is not listed there
 * (sendmsg, recvmsg, socketpair, AF_UNIX, AF_INET6) is absent.
 */
#ifndef RTMUX_SYS_SOCKET_H
#define RTMUX_SYS_SOCKET_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef _SOCKLEN_T_DECLARED
typedef uint32_t socklen_t;
#define _SOCKLEN_T_DECLARED
#endif
#ifndef _SA_FAMILY_T_DECLARED
typedef unsigned short sa_family_t;
#define _SA_FAMILY_T_DECLARED
#endif

struct sockaddr {
    sa_family_t sa_family;
    char sa_data[14];
};

/* Large and aligned enough for any address the system has (only struct sockaddr_in today). */
struct sockaddr_storage {
    sa_family_t ss_family;
    char __ss_pad[128 - sizeof(sa_family_t) - sizeof(unsigned long)];
    unsigned long __ss_align;
};

struct linger {
    int l_onoff;
    int l_linger;
};

#define SOCK_STREAM    1
#define SOCK_DGRAM     2
#define SOCK_RAW       3 /* not supported: socket() says EPROTOTYPE */
#define SOCK_SEQPACKET 5 /* not supported */
/* Flags or'ed into socket()'s type (POSIX 2024, Linux): O_NONBLOCK from the start; close-on-exec
 * means nothing without exec. */
#define SOCK_NONBLOCK 0x800
#define SOCK_CLOEXEC  0x80000

#define AF_UNSPEC 0
#define AF_UNIX   1 /* not supported */
#define AF_INET   2
#define AF_INET6  10 /* not supported */
#define PF_UNSPEC AF_UNSPEC
#define PF_INET   AF_INET

#define SOL_SOCKET    1
#define SO_DEBUG      1
#define SO_REUSEADDR  2
#define SO_TYPE       3
#define SO_ERROR      4
#define SO_DONTROUTE  5
#define SO_BROADCAST  6
#define SO_SNDBUF     7
#define SO_RCVBUF     8
#define SO_KEEPALIVE  9
#define SO_OOBINLINE  10
#define SO_LINGER     13
#define SO_RCVLOWAT   18
#define SO_SNDLOWAT   19
#define SO_RCVTIMEO   20
#define SO_SNDTIMEO   21
#define SO_ACCEPTCONN 30

#define SOMAXCONN 128

#define MSG_OOB       0x1
#define MSG_PEEK      0x2
#define MSG_DONTROUTE 0x4
#define MSG_CTRUNC    0x8
#define MSG_TRUNC     0x20
#define MSG_DONTWAIT  0x40
#define MSG_EOR       0x80
#define MSG_WAITALL   0x100
#define MSG_NOSIGNAL  0x4000

#define SHUT_RD   0
#define SHUT_WR   1
#define SHUT_RDWR 2

int socket(int domain, int type, int protocol);
int bind(int fd, const struct sockaddr *addr, socklen_t len);
int listen(int fd, int backlog);
int connect(int fd, const struct sockaddr *addr, socklen_t len);
int accept(int fd, struct sockaddr *__restrict addr, socklen_t *__restrict len);
ssize_t send(int fd, const void *buf, size_t n, int flags);
ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t tolen);
ssize_t recv(int fd, void *buf, size_t n, int flags);
ssize_t recvfrom(int fd, void *__restrict buf, size_t n, int flags, struct sockaddr *__restrict from,
                 socklen_t *__restrict fromlen);
int shutdown(int fd, int how);
int setsockopt(int fd, int level, int name, const void *val, socklen_t len);
int getsockopt(int fd, int level, int name, void *__restrict val, socklen_t *__restrict len);
int getsockname(int fd, struct sockaddr *__restrict addr, socklen_t *__restrict len);
int getpeername(int fd, struct sockaddr *__restrict addr, socklen_t *__restrict len);

#ifdef __cplusplus
}
#endif

#endif /* RTMUX_SYS_SOCKET_H */
