/*
 * The rtos's sockets (rtos/linuxsvc/net.c) against Linux's daemon (guest/rtmux-netd, a sanitizer build
 * of it) on the host, through a socket pair in place of the V-Bus channel (svc_host.c), started as
 * Linux's supervisor starts it (the channel on a descriptor, here 3). The other ends of the rtos's
 * connections are the host's own sockets on 127.0.0.1.
 *
 * Checked: TCP to a host listener (echo, 200 KB each way, partial sends and receives, shutdown) and
 * from a host client to an rtos listener (accept and its peer's address); UDP both ways (recvfrom's
 * sender, sendto, a connected datagram socket); the options and their errors; non-blocking sockets and
 * poll() over sockets, channel descriptors and both at once (also while another thread holds the
 * reader's role in a blocking recv); many threads with blocking calls at once (one blocked in accept
 * does not hold up the others); the daemon killed in the middle of traffic (calls in flight fail with
 * EIO within a bound, old descriptors EBADF, new calls ENOTCONN), then started again (all works).
 * It prints the round trip of a small echo and the throughput of a large one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "lib/netproto.h"
#include "linuxsvc/net.h"
#include "svc_host.h"

#ifndef NETD
#define NETD "rtmux-netd"
#endif

static pid_t daemon_pid;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void start_daemon(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    daemon_pid = fork();
    CHECK(daemon_pid >= 0);
    if (daemon_pid == 0) {
        dup2(sv[1], 3);
        for (int fd = 4; fd < 1024; fd++) { /* the daemon has the channel only, as under Linux */
            close(fd);
        }
        execl(NETD, "rtmux-netd", "--fd", "3", (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    svc_host_set_chan_fd("rtmux-net", sv[0]);
}

static void kill_daemon(void)
{
    kill(daemon_pid, SIGKILL);
    waitpid(daemon_pid, NULL, 0);
}

static struct sockaddr_in loopback(uint16_t port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

/* A host socket of `type` bound to 127.0.0.1 on a port of the kernel's choice (*port). */
static int host_socket(int type, uint16_t *port)
{
    int fd = socket(AF_INET, type, 0);
    struct sockaddr_in a = loopback(0);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    socklen_t len = sizeof(a);
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        b[i] = (uint8_t)(i * 131u + seed * 7u + (i >> 9));
    }
}

/* ------------------------------------------------------------------------- host-side counterparts */

/* Echoes every connection it accepts (one at a time, each in its own thread) until the listener
 * closes. */
static void *echo_conn(void *arg)
{
    int fd = (int)(intptr_t)arg;
    static __thread uint8_t buf[65536];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) {
            break;
        }
        for (ssize_t done = 0; done < n;) {
            ssize_t k = send(fd, buf + done, (size_t)(n - done), MSG_NOSIGNAL);
            if (k <= 0) {
                close(fd);
                return NULL;
            }
            done += k;
        }
    }
    close(fd);
    return NULL;
}

static void *echo_server(void *arg)
{
    int lfd = (int)(intptr_t)arg;
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) {
            return NULL;
        }
        pthread_t t;
        CHECK(pthread_create(&t, NULL, echo_conn, (void *)(intptr_t)fd) == 0);
        pthread_detach(t);
    }
}

static uint16_t echo_port;
static int echo_lfd;

static void start_echo(void)
{
    echo_lfd = host_socket(SOCK_STREAM, &echo_port);
    CHECK(listen(echo_lfd, 64) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, echo_server, (void *)(intptr_t)echo_lfd) == 0);
    pthread_detach(t);
}

/* An rtos socket connected to the host's echo server. */
static int echo_client(void)
{
    int fd = lnet_socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= LNET_FD_FIRST && fd < LNET_FD_FIRST + LNET_SOCKETS);
    struct sockaddr_in a = loopback(echo_port);
    CHECK(lnet_connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    return fd;
}

/* ----------------------------------------------------------------------------------------- tests */

static void test_errors(void)
{
    CHECK(lnet_socket(AF_INET6, SOCK_STREAM, 0) == -1 && errno == EAFNOSUPPORT);
    CHECK(lnet_socket(AF_INET, SOCK_RAW, 0) == -1 && errno == EPROTOTYPE);
    CHECK(lnet_socket(AF_INET, SOCK_STREAM, IPPROTO_UDP) == -1 && errno == EPROTONOSUPPORT);
    char b[4];
    CHECK(lnet_recvfrom(LNET_FD_FIRST + 5, b, 4, 0, NULL, NULL) == -1 && errno == EBADF);
    CHECK(lnet_recvfrom(1, b, 4, 0, NULL, NULL) == -1 && errno == ENOTSOCK);
    CHECK(lnet_close(LNET_FD_FIRST + 7) == -1 && errno == EBADF);
    int fd = lnet_socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    struct sockaddr_in a = loopback(1); /* a port nobody listens on (privileged: nobody may) */
    CHECK(lnet_connect(fd, (struct sockaddr *)&a, sizeof(a)) == -1 && errno == ECONNREFUSED);
    CHECK(lnet_connect(fd, (struct sockaddr *)&a, 4) == -1 && errno == EINVAL);
    struct sockaddr_in six = a;
    six.sin_family = AF_INET6;
    CHECK(lnet_connect(fd, (struct sockaddr *)&six, sizeof(six)) == -1 && errno == EAFNOSUPPORT);
    CHECK(lnet_sendto(fd, "x", 1, MSG_OOB, NULL, 0) == -1 && errno == EOPNOTSUPP);
    CHECK(lnet_close(fd) == 0);
    fd = lnet_socket(AF_INET, SOCK_STREAM, 0);
    CHECK(lnet_sendto(fd, "x", 1, 0, NULL, 0) == -1 && (errno == EPIPE || errno == ENOTCONN));
    CHECK(lnet_recvfrom(fd, b, 4, 0, NULL, NULL) == -1 && errno == ENOTCONN);
    CHECK(lnet_listen(fd, 4) == 0); /* listen without bind: Linux picks a port */
    struct sockaddr_in got;
    socklen_t len = sizeof(got);
    CHECK(lnet_getsockname(fd, (struct sockaddr *)&got, &len) == 0 && len == sizeof(got) &&
          got.sin_family == AF_INET && got.sin_port != 0);
    len = sizeof(got);
    CHECK(lnet_getpeername(fd, (struct sockaddr *)&got, &len) == -1 && errno == ENOTCONN);
    CHECK(lnet_shutdown(fd, 7) == -1 && errno == EINVAL);
    struct stat st;
    CHECK(lnet_fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode));
    CHECK(lnet_close(fd) == 0 && lnet_close(fd) == -1 && errno == EBADF);
}

static void test_tcp_client(void)
{
    int fd = echo_client();
    struct sockaddr_in got;
    socklen_t len = sizeof(got);
    CHECK(lnet_getpeername(fd, (struct sockaddr *)&got, &len) == 0 && ntohs(got.sin_port) == echo_port &&
          got.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
    /* a small round trip, timed */
    char b[64];
    double t0 = now();
    unsigned rounds = 200;
    for (unsigned i = 0; i < rounds; i++) {
        CHECK(lnet_write(fd, "ping", 4) == 4);
        CHECK(lnet_recvfrom(fd, b, 4, MSG_WAITALL, NULL, NULL) == 4 && memcmp(b, "ping", 4) == 0);
    }
    double rtt = (now() - t0) / rounds;
    /* 200 KB each way: sends of several parts, receives of whatever came */
    size_t n = 200000;
    uint8_t *out = malloc(n), *in = malloc(n + 16);
    fill(out, n, 3);
    t0 = now();
    CHECK(lnet_sendto(fd, out, n, 0, NULL, 0) == (ssize_t)n);
    size_t got_n = 0;
    unsigned reads = 0;
    while (got_n < n) {
        ssize_t k = lnet_read(fd, in + got_n, n + 16 - got_n);
        CHECK(k > 0);
        if (k <= 0) {
            break;
        }
        got_n += (size_t)k;
        reads++;
    }
    double secs = now() - t0;
    CHECK(got_n == n && memcmp(in, out, n) == 0);
    printf("svc_net: echo through rtmux-netd: round trip %.0f us (4 bytes), 200 KB each way in %.1f ms "
           "(%.1f MB/s each way, %u reads)\n",
           rtt * 1e6, secs * 1e3, (double)n / secs / 1e6, reads);
    /* MSG_PEEK leaves the bytes */
    CHECK(lnet_write(fd, "abc", 3) == 3);
    CHECK(lnet_recvfrom(fd, b, 3, MSG_PEEK | MSG_WAITALL, NULL, NULL) >= 1 && b[0] == 'a');
    CHECK(lnet_recvfrom(fd, b, 3, MSG_WAITALL, NULL, NULL) == 3 && memcmp(b, "abc", 3) == 0);
    /* the end: our side stops writing, the server closes, we read the end */
    CHECK(lnet_shutdown(fd, SHUT_WR) == 0);
    CHECK(lnet_read(fd, b, sizeof(b)) == 0);
    CHECK(lnet_close(fd) == 0);
    free(out);
    free(in);
}

/* The host connects to an rtos listener. */
static uint16_t rtos_port;
static void *host_client(void *arg)
{
    (void)arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = loopback(rtos_port);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    CHECK(send(fd, "hello", 5, 0) == 5);
    char b[16];
    ssize_t n = recv(fd, b, 6, MSG_WAITALL);
    CHECK(n == 6 && memcmp(b, "world!", 6) == 0);
    close(fd);
    return NULL;
}

static void test_tcp_server(void)
{
    int lfd = lnet_socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    CHECK(lnet_setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0);
    struct sockaddr_in a = loopback(0);
    CHECK(lnet_bind(lfd, (struct sockaddr *)&a, sizeof(a)) == 0);
    CHECK(lnet_listen(lfd, 8) == 0);
    socklen_t len = sizeof(a);
    CHECK(lnet_getsockname(lfd, (struct sockaddr *)&a, &len) == 0);
    rtos_port = ntohs(a.sin_port);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, host_client, NULL) == 0);
    struct sockaddr_in peer;
    len = sizeof(peer);
    int fd = lnet_accept(lfd, (struct sockaddr *)&peer, &len);
    CHECK(fd >= LNET_FD_FIRST && len == sizeof(peer) && peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
    char b[8];
    CHECK(lnet_recvfrom(fd, b, 5, MSG_WAITALL, NULL, NULL) == 5 && memcmp(b, "hello", 5) == 0);
    CHECK(lnet_write(fd, "world!", 6) == 6);
    pthread_join(t, NULL);
    CHECK(lnet_read(fd, b, sizeof(b)) == 0); /* the host closed */
    CHECK(lnet_close(fd) == 0 && lnet_close(lfd) == 0);
}

static void test_udp(void)
{
    uint16_t hport;
    int h = host_socket(SOCK_DGRAM, &hport);
    int fd = lnet_socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = loopback(0);
    CHECK(lnet_bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    socklen_t len = sizeof(a);
    CHECK(lnet_getsockname(fd, (struct sockaddr *)&a, &len) == 0 && a.sin_port != 0);
    /* host -> rtos: recvfrom tells the sender */
    CHECK(sendto(h, "to-rtos", 7, 0, (struct sockaddr *)&a, sizeof(a)) == 7);
    char b[32];
    struct sockaddr_in from;
    len = sizeof(from);
    CHECK(lnet_recvfrom(fd, b, sizeof(b), 0, (struct sockaddr *)&from, &len) == 7 &&
          memcmp(b, "to-rtos", 7) == 0);
    CHECK(len == sizeof(from) && ntohs(from.sin_port) == hport &&
          from.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
    /* rtos -> host */
    CHECK(lnet_sendto(fd, "to-host", 7, 0, (struct sockaddr *)&from, sizeof(from)) == 7);
    CHECK(recv(h, b, sizeof(b), 0) == 7 && memcmp(b, "to-host", 7) == 0);
    /* a short buffer: the datagram is cut (its rest dropped, as Linux does) */
    CHECK(sendto(h, "0123456789", 10, 0, (struct sockaddr *)&a, sizeof(a)) == 10);
    CHECK(lnet_recvfrom(fd, b, 4, 0, NULL, NULL) == 4 && memcmp(b, "0123", 4) == 0);
    /* connected: send/recv with the peer */
    CHECK(lnet_connect(fd, (struct sockaddr *)&from, sizeof(from)) == 0);
    CHECK(lnet_write(fd, "conn", 4) == 4);
    CHECK(recv(h, b, sizeof(b), 0) == 4 && memcmp(b, "conn", 4) == 0);
    /* a datagram above what one message carries */
    static uint8_t big[NETP_DATA_MAX + 1];
    CHECK(lnet_sendto(fd, big, sizeof(big), 0, NULL, 0) == -1 && errno == EMSGSIZE);
    CHECK(lnet_sendto(fd, big, NETP_DATA_MAX, 0, NULL, 0) == NETP_DATA_MAX);
    CHECK(recv(h, b, sizeof(b), 0) == sizeof(b));
    int one = 1;
    CHECK(lnet_setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) == 0);
    CHECK(lnet_close(fd) == 0);
    close(h);
}

static void test_options(void)
{
    int fd = lnet_socket(AF_INET, SOCK_STREAM, 0);
    int v = 1;
    socklen_t len = sizeof(v);
    CHECK(lnet_setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, sizeof(v)) == 0);
    v = 0;
    CHECK(lnet_getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, &len) == 0 && v == 1 && len == sizeof(int));
    v = 1;
    CHECK(lnet_setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v)) == 0);
    len = sizeof(v);
    CHECK(lnet_getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len) == 0 && v == 1);
    len = sizeof(v);
    CHECK(lnet_getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == 0 && v == SOCK_STREAM);
    CHECK(lnet_setsockopt(fd, SOL_SOCKET, SO_LINGER, &v, sizeof(v)) == -1 && errno == ENOPROTOOPT);
    CHECK(lnet_setsockopt(fd, SOL_SOCKET, SO_ERROR, &v, sizeof(v)) == -1 && errno == ENOPROTOOPT);
    CHECK(lnet_setsockopt(fd, IPPROTO_IP, 1, &v, sizeof(v)) == -1 && errno == ENOPROTOOPT);
    CHECK(lnet_setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &v, 1) == -1 && errno == EINVAL);
    struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
    CHECK(lnet_setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0);
    struct timeval bad = {.tv_sec = 0, .tv_usec = 1000000};
    CHECK(lnet_setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bad, sizeof(bad)) == -1 && errno == EDOM);
    struct timeval back;
    len = sizeof(back);
    CHECK(lnet_getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &back, &len) == 0 && back.tv_sec == 0 &&
          back.tv_usec == 200000);
    CHECK(lnet_close(fd) == 0);
    /* SO_RCVTIMEO: a recv without data ends with EAGAIN after it */
    fd = echo_client();
    CHECK(lnet_setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0);
    char b[4];
    double t0 = now();
    CHECK(lnet_recvfrom(fd, b, sizeof(b), 0, NULL, NULL) == -1 && (errno == EAGAIN || errno == EWOULDBLOCK));
    double took = now() - t0;
    CHECK(took >= 0.19 && took < 1.0);
    /* SO_ERROR after a refused non-blocking connect */
    int nb = lnet_socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = loopback(1);
    int r = lnet_connect(nb, (struct sockaddr *)&a, sizeof(a));
    CHECK(r == -1 && (errno == EINPROGRESS || errno == ECONNREFUSED));
    if (errno == EINPROGRESS) {
        struct pollfd p = {.fd = nb, .events = POLLOUT};
        CHECK(lnet_poll(&p, 1, 2000, NULL) == 1);
        len = sizeof(v);
        CHECK(lnet_getsockopt(nb, SOL_SOCKET, SO_ERROR, &v, &len) == 0 && v == ECONNREFUSED);
    }
    CHECK(lnet_close(nb) == 0 && lnet_close(fd) == 0);
}

static void test_nonblocking(void)
{
    int lfd = lnet_socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    CHECK((lnet_fcntl(lfd, F_GETFL, 0) & O_NONBLOCK) != 0);
    struct sockaddr_in a = loopback(0);
    CHECK(lnet_bind(lfd, (struct sockaddr *)&a, sizeof(a)) == 0 && lnet_listen(lfd, 4) == 0);
    socklen_t len = sizeof(a);
    CHECK(lnet_getsockname(lfd, (struct sockaddr *)&a, &len) == 0);
    double t0 = now();
    CHECK(lnet_accept(lfd, NULL, NULL) == -1 && errno == EAGAIN);
    CHECK(now() - t0 < 0.1);
    /* a non-blocking connect, then poll for POLLOUT, then SO_ERROR */
    int c = lnet_socket(AF_INET, SOCK_STREAM, 0);
    CHECK(lnet_fcntl(c, F_SETFL, O_NONBLOCK) == 0);
    int r = lnet_connect(c, (struct sockaddr *)&a, sizeof(a));
    CHECK(r == 0 || errno == EINPROGRESS);
    struct pollfd p[2] = {{.fd = c, .events = POLLOUT}, {.fd = lfd, .events = POLLIN}};
    CHECK(lnet_poll(p, 2, 2000, NULL) >= 1 && (p[0].revents & POLLOUT) != 0);
    int v = -1;
    len = sizeof(v);
    CHECK(lnet_getsockopt(c, SOL_SOCKET, SO_ERROR, &v, &len) == 0 && v == 0);
    CHECK(lnet_poll(&p[1], 1, 2000, NULL) == 1 && p[1].revents == POLLIN);
    int s = lnet_accept(lfd, NULL, NULL);
    CHECK(s >= 0);
    char b[4];
    t0 = now();
    CHECK(lnet_recvfrom(c, b, 4, 0, NULL, NULL) == -1 && errno == EAGAIN);
    CHECK(lnet_recvfrom(s, b, 4, MSG_DONTWAIT, NULL, NULL) == -1 && errno == EAGAIN);
    CHECK(now() - t0 < 0.1);
    /* poll with a timeout and nothing ready */
    p[0] = (struct pollfd){.fd = s, .events = POLLIN};
    t0 = now();
    CHECK(lnet_poll(p, 1, 150, NULL) == 0 && p[0].revents == 0);
    CHECK(now() - t0 >= 0.14 && now() - t0 < 1.0);
    CHECK(lnet_write(c, "nb", 2) == 2);
    CHECK(lnet_poll(p, 1, 2000, NULL) == 1 && p[0].revents == POLLIN);
    CHECK(lnet_recvfrom(s, b, 4, 0, NULL, NULL) == 2);
    /* a closed peer: POLLIN (the end), then read 0 */
    CHECK(lnet_close(c) == 0);
    CHECK(lnet_poll(p, 1, 2000, NULL) == 1 && (p[0].revents & POLLIN) != 0);
    CHECK(lnet_read(s, b, 4) == 0);
    /* a bad descriptor in a set */
    struct pollfd q[2] = {{.fd = LNET_FD_FIRST + 63, .events = POLLIN}, {.fd = -1, .events = POLLIN}};
    CHECK(lnet_poll(q, 2, 0, NULL) == 1 && q[0].revents == POLLNVAL && q[1].revents == 0);
    CHECK(lnet_close(s) == 0 && lnet_close(lfd) == 0);
}

/* poll() over channel descriptors, and over channels and sockets at once. */
static int chan_linux_end; /* the Linux side of the local channel `local` */

struct blocker {
    int fd;
    ssize_t result;
    int err;
    double took;
};

static void *blocked_recv(void *arg)
{
    struct blocker *b = arg;
    char buf[8];
    double t0 = now();
    b->result = lnet_recvfrom(b->fd, buf, sizeof(buf), 0, NULL, NULL);
    b->err = errno;
    b->took = now() - t0;
    return NULL;
}

static void *write_later(void *arg)
{
    usleep((useconds_t)(uintptr_t)arg);
    CHECK(send(chan_linux_end, "c", 1, 0) == 1);
    return NULL;
}

static void test_poll_channels(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    svc_host_set_chan_fd("local", sv[0]);
    chan_linux_end = sv[1];
    rt_chan_t *ch;
    CHECK(rt_chan_open("local", &ch) == RT_OK);
    int cfd = lnet_chan_fd(ch);
    CHECK(cfd >= LNET_CHAN_FD_FIRST && cfd < LNET_FD_END);
    struct pollfd p = {.fd = cfd, .events = POLLIN | POLLOUT};
    CHECK(lnet_poll(&p, 1, 0, NULL) == 1 && p.revents == POLLOUT);
    /* a channel alone: woken by its bytes */
    p.events = POLLIN;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, write_later, (void *)(uintptr_t)100000) == 0);
    double t0 = now();
    CHECK(lnet_poll(&p, 1, 5000, NULL) == 1 && p.revents == POLLIN);
    CHECK(now() - t0 < 1.0);
    pthread_join(t, NULL);
    char c;
    CHECK(rt_chan_recv(ch, &c, 1, RT_NO_WAIT) == 1);
    /* sockets and the channel: the channel's bytes end the wait */
    int s = echo_client();
    struct pollfd set[2] = {{.fd = s, .events = POLLIN}, {.fd = cfd, .events = POLLIN}};
    CHECK(pthread_create(&t, NULL, write_later, (void *)(uintptr_t)300000) == 0);
    t0 = now();
    CHECK(lnet_poll(set, 2, 5000, NULL) == 1 && set[0].revents == 0 && set[1].revents == POLLIN);
    double took = now() - t0;
    CHECK(took >= 0.25 && took < 0.6);
    pthread_join(t, NULL);
    CHECK(rt_chan_recv(ch, &c, 1, RT_NO_WAIT) == 1);
    /* ... also while another thread holds the reader's role, blocked in a recv for good */
    int s2 = echo_client();
    struct blocker b = {.fd = s2};
    pthread_t bt;
    CHECK(pthread_create(&bt, NULL, blocked_recv, &b) == 0);
    usleep(100000);
    CHECK(pthread_create(&t, NULL, write_later, (void *)(uintptr_t)300000) == 0);
    t0 = now();
    CHECK(lnet_poll(set, 2, -1, NULL) == 1 && set[1].revents == POLLIN);
    took = now() - t0;
    CHECK(took >= 0.25 && took < 0.8);
    printf("svc_net: a poll over a socket and a channel woke %.1f ms after the channel's byte, another "
           "thread blocked in recv\n",
           (took - 0.3) * 1e3);
    pthread_join(t, NULL);
    CHECK(rt_chan_recv(ch, &c, 1, RT_NO_WAIT) == 1);
    /* ... and the socket's bytes end it too */
    CHECK(lnet_write(s, "e", 1) == 1);
    CHECK(lnet_poll(set, 2, 5000, NULL) == 1 && set[0].revents == POLLIN && set[1].revents == 0);
    CHECK(lnet_read(s, &c, 1) == 1 && c == 'e');
    CHECK(lnet_write(s2, "f", 1) == 1); /* the blocked recv gets its byte */
    pthread_join(bt, NULL);
    CHECK(b.result == 1);
    /* the Linux end closes: POLLHUP */
    close(sv[1]);
    p = (struct pollfd){.fd = cfd, .events = POLLIN};
    CHECK(lnet_poll(&p, 1, 2000, NULL) == 1 && (p.revents & POLLHUP) != 0);
    CHECK(lnet_close(cfd) == 0 && lnet_close(cfd) == -1 && errno == EBADF);
    CHECK(lnet_close(s) == 0 && lnet_close(s2) == 0);
    (void)rt_chan_close(ch);
}

/* Many threads with blocking calls at once. */
static volatile int stop_workers;
static void *echo_worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    int fd = echo_client();
    size_t n = 30000 + id * 1000;
    uint8_t *out = malloc(n), *in = malloc(n);
    for (unsigned round = 0; round < 3; round++) {
        fill(out, n, id * 10 + round);
        CHECK(lnet_sendto(fd, out, n, 0, NULL, 0) == (ssize_t)n);
        CHECK(lnet_recvfrom(fd, in, n, MSG_WAITALL, NULL, NULL) == (ssize_t)n && memcmp(in, out, n) == 0);
    }
    CHECK(lnet_close(fd) == 0);
    free(out);
    free(in);
    return NULL;
}

static void *blocked_accept(void *arg)
{
    struct blocker *b = arg;
    double t0 = now();
    b->result = lnet_accept(b->fd, NULL, NULL);
    b->err = errno;
    b->took = now() - t0;
    return NULL;
}

static void test_threads(void)
{
    int lfd = lnet_socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = loopback(0);
    CHECK(lnet_bind(lfd, (struct sockaddr *)&a, sizeof(a)) == 0 && lnet_listen(lfd, 4) == 0);
    struct blocker acc = {.fd = lfd};
    pthread_t at;
    CHECK(pthread_create(&at, NULL, blocked_accept, &acc) == 0);
    /* ten more blocked in recv for good */
    struct blocker rb[10];
    pthread_t rt[10];
    for (unsigned i = 0; i < 10; i++) {
        rb[i] = (struct blocker){.fd = echo_client()};
        CHECK(pthread_create(&rt[i], NULL, blocked_recv, &rb[i]) == 0);
    }
    usleep(100000);
    /* one send and its echo while they all wait */
    int fd = echo_client();
    char b[4];
    double t0 = now();
    CHECK(lnet_write(fd, "quick", 5) == 5 && lnet_recvfrom(fd, b, 4, MSG_WAITALL, NULL, NULL) == 4);
    double took = now() - t0;
    CHECK(took < 0.25); /* not held up by the blocked ones (each holds the daemon up to 1 s) */
    printf("svc_net: a send and its echo took %.2f ms while 11 threads were blocked (accept, recv)\n",
           took * 1e3);
    char rest;
    CHECK(lnet_read(fd, &rest, 1) == 1);
    /* twelve threads of traffic */
    pthread_t w[12];
    for (unsigned i = 0; i < 12; i++) {
        CHECK(pthread_create(&w[i], NULL, echo_worker, (void *)(uintptr_t)i) == 0);
    }
    for (unsigned i = 0; i < 12; i++) {
        pthread_join(w[i], NULL);
    }

    /* closing a socket ends the call blocked on it */
    CHECK(lnet_close(lfd) == 0);
    pthread_join(at, NULL);
    CHECK(acc.result == -1 && acc.err == EBADF);
    for (unsigned i = 0; i < 10; i++) {
        CHECK(lnet_write(rb[i].fd, "x", 1) == 1);
        pthread_join(rt[i], NULL);
        CHECK(rb[i].result == 1);
        CHECK(lnet_close(rb[i].fd) == 0);
    }
    CHECK(lnet_close(fd) == 0);
}

/* The daemon dies in the middle of traffic, then comes back. */
static volatile int stop_traffic;
static void *traffic(void *arg)
{
    (void)arg;
    int errors = 0;
    while (!stop_traffic) {
        int fd = lnet_socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) {
            CHECK(errno == ENOTCONN || errno == EIO);
            errors++;
            usleep(1000);
            continue;
        }
        struct sockaddr_in a = loopback(echo_port);
        static __thread uint8_t buf[20000];
        const ssize_t size = (ssize_t)sizeof(buf);
        /* whole, or cut short by the session's end (what went until then), or failed so */
        if (lnet_connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
            CHECK(errno == EIO || errno == EBADF || errno == ENOTCONN);
        } else {
            ssize_t k = lnet_sendto(fd, buf, sizeof(buf), 0, NULL, 0);
            CHECK((k >= 0 && k <= size) ||
                  (k == -1 && (errno == EIO || errno == EBADF || errno == ENOTCONN)));
            if (k == size) {
                ssize_t n = lnet_recvfrom(fd, buf, sizeof(buf), MSG_WAITALL, NULL, NULL);
                CHECK((n >= 0 && n <= size) ||
                      (n == -1 && (errno == EIO || errno == EBADF || errno == ENOTCONN)));
            }
        }
        (void)lnet_close(fd);
    }
    return (void *)(intptr_t)errors;
}

static void test_restart(void)
{
    int old = echo_client();
    int lfd = lnet_socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = loopback(0);
    CHECK(lnet_bind(lfd, (struct sockaddr *)&a, sizeof(a)) == 0 && lnet_listen(lfd, 4) == 0);
    struct blocker acc = {.fd = lfd};
    pthread_t at, t[4];
    CHECK(pthread_create(&at, NULL, blocked_accept, &acc) == 0);
    for (unsigned i = 0; i < 4; i++) {
        CHECK(pthread_create(&t[i], NULL, traffic, NULL) == 0);
    }
    usleep(200000);
    double killed = now();
    kill_daemon();
    pthread_join(at, NULL);
    double ended = now() - killed;
    CHECK(acc.result == -1 && (acc.err == EIO || acc.err == ENOTCONN));
    CHECK(ended < 0.5);
    printf("svc_net: the daemon killed: a blocked accept failed with EIO %.1f ms later\n", ended * 1e3);
    usleep(100000);
    char b[4];
    CHECK(lnet_read(old, b, 1) == -1 && errno == EBADF);
    CHECK(lnet_socket(AF_INET, SOCK_STREAM, 0) == -1 && errno == ENOTCONN);
    start_daemon();
    usleep(200000);
    stop_traffic = 1;
    for (unsigned i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
    }
    CHECK(lnet_close(old) == -1 && errno == EBADF);
    CHECK(lnet_close(lfd) == -1 && errno == EBADF);
    int fd = echo_client(); /* works again */
    CHECK(lnet_write(fd, "back", 4) == 4 && lnet_recvfrom(fd, b, 4, MSG_WAITALL, NULL, NULL) == 4 &&
          memcmp(b, "back", 4) == 0);
    CHECK(lnet_close(fd) == 0);
    struct lsvc_stats s;
    lnet_stats(&s);
    CHECK(s.sessions == 2 && s.lost == 1 && s.bad_frames == 0 && s.unknown_tags == 0 && s.bad_replies == 0);
    printf("svc_net: %llu requests, %llu failed, 2 sessions\n", (unsigned long long)s.requests,
           (unsigned long long)s.errors);
}

int main(void)
{
    if (access(NETD, X_OK) != 0) {
        fprintf(stderr, "svc_net: %s not found\n", NETD);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    start_echo();
    svc_host_set_chan_fd("rtmux-net", -1);
    lnet_init();
    /* no daemon yet: the channel is not connected */
    CHECK(lnet_socket(AF_INET, SOCK_STREAM, 0) == -1 && errno == ENOTCONN);
    start_daemon();
    test_errors();
    test_tcp_client();
    test_tcp_server();
    test_udp();
    test_options();
    test_nonblocking();
    test_poll_channels();
    test_threads();
    test_restart();
    kill_daemon();
    close(echo_lfd);
    UNIT_DONE("svc_net");
}
