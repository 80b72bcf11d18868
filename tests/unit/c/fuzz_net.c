/*
 * Fuzzer of the rtos's sockets (rtos/linuxsvc/net.c, and conn.c's reader under its protocol), built
 * natively with AddressSanitizer and UndefinedBehaviorSanitizer, against a hostile rtmux-net daemon on
 * the other end of the channel (svc_host.c's socket). Client threads make socket calls at random (on
 * sockets the server made up, without timeouts that could keep them long); the server answers each
 * request correctly, with an error, a wrong tag, twice, with the wrong type, a malformed body, counts
 * and sizes that lie (more data than asked, a count that is not the frame's, more bytes sent than
 * given, a poll with another number of sockets), split into pieces, not at all, or with garbage and
 * frame sizes out of range that lose the framing (the client then drops the connection and a new
 * server takes over, as Linux's supervisor would start one).
 *
 * Checked: no memory error (the sanitizers), a receive returns at most what was asked and writes
 * nothing past it, an address nothing past the length given (guards after both), revents only the
 * bits POSIX allows, every call returns (a request without an answer fails after the short timeout of
 * this build), and each way of misbehaving was met and counted.
 *
 *   fuzz_net [--seed N] [--seconds S]
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "lib/netproto.h"
#include "linuxsvc/net.h"
#include "svc_fuzz.h"
#include "svc_host.h"

#define CLIENTS 4u
#define GUARD   64u

static unsigned seed;
static volatile int stopping;

/* ------------------------------------------------------------------------------------ the server */

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void send_all(int fd, const uint8_t *b, size_t n, bool split)
{
    size_t done = 0;
    while (done < n) {
        size_t k = split ? 1 + rnd() % 7 : n - done;
        if (k > n - done) {
            k = n - done;
        }
        if (send(fd, b + done, k, MSG_NOSIGNAL) <= 0) {
            return;
        }
        done += k;
        if (split && rnd() % 4 == 0) {
            usleep(100);
        }
    }
}

static void put_addr(uint8_t *b, size_t *n)
{
    put(b, n, rnd(), 4);
    put(b, n, rnd(), 2);
}

/* A body that answers request type t (its body `req`, `len` bytes) well, or nearly. */
static size_t good_body(uint8_t t, const uint8_t *req, size_t len, uint8_t *b)
{
    size_t n = 0;
    switch (t) {
    case NETP_TVERSION: { /* msize, version (now and then another of either) */
        uint32_t msize = rnd() % 8 == 0 ? rnd() % 20000 : NETP_MSIZE - (rnd() % 2 ? 0 : rnd() % 7000);
        put(b, &n, msize, 4);
        const char *v = rnd() % 10 == 0 ? "rtmux-net.0" : NETP_VERSION;
        put(b, &n, strlen(v), 2);
        memcpy(b + n, v, strlen(v));
        n += strlen(v);
        break;
    }
    case NETP_TSOCKET:
        put(b, &n, rnd() % 3 == 0 ? rnd() : 1 + rnd() % 4, 4);
        break;
    case NETP_TACCEPT:
        put(b, &n, 1 + rnd() % 4, 4);
        put_addr(b, &n);
        break;
    case NETP_TSEND: { /* the count taken: what was sent, less, or (a lie) more */
        uint32_t sent = len >= NETP_TSEND_FIXED ? get32(req + 19) : 0;
        uint32_t k = rnd() % 6 == 0 ? sent + 1 + rnd() % 100 : (rnd() % 2 ? sent : rnd() % (sent + 1));
        put(b, &n, k, 4);
        break;
    }
    case NETP_TRECV: { /* data: up to what was asked, sometimes more, sometimes a count that lies */
        uint32_t want = len >= NETP_TRECV_LEN ? get32(req + 12) : 0;
        uint32_t k = rnd() % 6 == 0 ? want + 1 + rnd() % 64 : (want == 0 ? 0 : rnd() % (want + 1));
        if (k > 8192) {
            k = 8192;
        }
        put(b, &n, rnd() % 3, 1);
        put_addr(b, &n);
        put(b, &n, rnd() % 10 == 0 ? k + 1 : k, 4);
        for (uint32_t i = 0; i < k; i++) {
            b[n++] = (uint8_t)rnd();
        }
        break;
    }
    case NETP_TGETOPT:
        put(b, &n, rnd() % 3 == 0 ? rnd() : rnd() % 2, 4);
        break;
    case NETP_TNAME:
        put_addr(b, &n);
        break;
    case NETP_TPOLL: { /* as many revents as sockets asked (sometimes not), random bits */
        unsigned k = len >= 6 ? (unsigned)(req[4] | req[5] << 8) : 0;
        if (rnd() % 8 == 0) {
            k = rnd() % 70;
        }
        put(b, &n, k, 2);
        for (unsigned i = 0; i < k; i++) {
            put(b, &n, rnd() % 4 == 0 ? rnd() : 0, 2);
        }
        break;
    }
    case NETP_TCONNECT:
    default: /* Rbind, Rlisten, Rconnect, Rshutdown, Rclose, Rsetopt: empty */
        break;
    }
    return n;
}

static uint64_t told[10];

static void *server(void *arg)
{
    int fd = (int)(intptr_t)arg;
    static uint8_t req[70000], out[20000];
    for (;;) {
        size_t have = 0;
        while (have < 4) {
            ssize_t k = recv(fd, req + have, 4 - have, 0);
            if (k <= 0) {
                close(fd);
                return NULL;
            }
            have += (size_t)k;
        }
        uint32_t size = get32(req);
        if (size < 7 || size > sizeof(req)) {
            close(fd);
            return NULL;
        }
        while (have < size) {
            ssize_t k = recv(fd, req + have, size - have, 0);
            if (k <= 0) {
                close(fd);
                return NULL;
            }
            have += (size_t)k;
        }
        uint8_t type = req[4];
        uint16_t tag = (uint16_t)(req[5] | req[6] << 8);
        unsigned mode = rnd() % 100;
        size_t n = 7;
        uint8_t rtype = (uint8_t)(type + 1);
        if (mode < 55 || type == NETP_TVERSION) { /* a good reply (Tversion: always, or nothing works) */
            n += good_body(type, req + 7, size - 7, out + 7);
            told[0]++;
        } else if (mode < 68) { /* Rlerror: EAGAIN often, so calls ask again */
            rtype = NETP_RLERROR;
            put(out, &n, rnd() % 2 ? 11 : rnd() % 130, 4);
            told[1]++;
        } else if (mode < 73) { /* a tag nobody sent */
            tag = (uint16_t)rnd();
            n += good_body(type, req + 7, size - 7, out + 7);
            told[2]++;
        } else if (mode < 78) { /* the wrong type */
            rtype = (uint8_t)(rnd() % 2 ? NETP_RSOCKET + 2 * (rnd() % 13) : NETP_RRECV);
            n += good_body(type, req + 7, size - 7, out + 7);
            told[3]++;
        } else if (mode < 83) { /* a body cut short or padded */
            n += good_body(type, req + 7, size - 7, out + 7);
            n = rnd() % 2 && n > 8 ? n - 1 - rnd() % (n - 8) : n + 1 + rnd() % 5;
            told[4]++;
        } else if (mode < 86) { /* no answer at all */
            told[5]++;
            continue;
        } else if (mode < 88) { /* garbage: the framing is lost */
            size_t k = 1 + rnd() % 64;
            for (size_t i = 0; i < k; i++) {
                out[i] = (uint8_t)rnd();
            }
            send_all(fd, out, k, false);
            told[6]++;
            continue;
        } else if (mode < 90) { /* a size out of range */
            put(out, &(size_t){0}, rnd() % 2 ? rnd() % 7 : 0x100000 + rnd(), 4);
            out[4] = rtype;
            out[5] = (uint8_t)tag;
            out[6] = (uint8_t)(tag >> 8);
            send_all(fd, out, 7, false);
            told[7]++;
            continue;
        } else { /* a good reply, in pieces, sometimes twice */
            n += good_body(type, req + 7, size - 7, out + 7);
            told[8]++;
        }
        size_t at = 0;
        put(out, &at, n, 4);
        out[4] = rtype;
        out[5] = (uint8_t)tag;
        out[6] = (uint8_t)(tag >> 8);
        send_all(fd, out, n, mode >= 90);
        if (mode >= 95) {
            send_all(fd, out, n, false);
            told[9]++;
        }
    }
}

static pthread_t servers[100000];
static unsigned n_servers;

static void new_server(void)
{
    if (stopping || n_servers == sizeof(servers) / sizeof(servers[0])) {
        svc_host_set_chan_fd("rtmux-net", -1);
        return;
    }
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(pthread_create(&servers[n_servers++], NULL, server, (void *)(intptr_t)sv[1]) == 0);
    svc_host_set_chan_fd("rtmux-net", sv[0]);
}

/* ------------------------------------------------------------------------------------- the clients */

static void check_guard(const uint8_t *p)
{
    for (unsigned i = 0; i < GUARD; i++) {
        CHECK(p[i] == 0xA5);
    }
}

/* An address buffer with a guard after the length the call is given. */
struct addr_buf {
    struct sockaddr_in a;
    uint8_t guard[GUARD];
};

static void *client(void *arg)
{
    (void)arg;
    static __thread uint8_t buf[9000 + GUARD];
    int fds[8];
    unsigned nfd = 0;
    struct timeval tv = {.tv_sec = 0, .tv_usec = 20000}; /* a blocking call asks again for 20 ms at most */
    while (!stopping) {
        size_t want = rnd() % 9000;
        memset(buf + want, 0xA5, GUARD);
        struct addr_buf ab;
        memset(&ab, 0xA5, sizeof(ab));
        socklen_t given = (socklen_t)(rnd() % 3 == 0 ? rnd() % sizeof(ab.a) : sizeof(ab.a));
        socklen_t alen = given;
        int fd = nfd > 0 ? fds[rnd() % nfd] : LNET_FD_FIRST;
        int flags = rnd() % 2 ? MSG_DONTWAIT : 0;
        struct sockaddr_in to = {
            .sin_family = AF_INET, .sin_port = (in_port_t)rnd(), .sin_addr = {(in_addr_t)rnd()}};
        switch (rnd() % 12) {
        case 0:
        case 1: {
            int s = lnet_socket(AF_INET, rnd() % 2 ? SOCK_STREAM : SOCK_DGRAM, 0);
            if (s >= 0) {
                CHECK(s >= LNET_FD_FIRST && s < LNET_FD_FIRST + LNET_SOCKETS);
                (void)lnet_setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
                (void)lnet_setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
                if (nfd < 8) {
                    fds[nfd++] = s;
                } else {
                    (void)lnet_close(s);
                }
            }
            break;
        }
        case 2: {
            ssize_t r = lnet_recvfrom(fd, buf, want, flags | (rnd() % 4 == 0 ? MSG_PEEK : 0),
                                      (struct sockaddr *)&ab.a, &alen);
            CHECK(r <= (ssize_t)want);
            break;
        }
        case 3: {
            ssize_t r =
                lnet_sendto(fd, buf, want, flags, rnd() % 2 ? (struct sockaddr *)&to : NULL, sizeof(to));
            CHECK(r <= (ssize_t)want);
            break;
        }
        case 4:
            (void)lnet_connect(fd, (struct sockaddr *)&to, sizeof(to));
            break;
        case 5: {
            int s = lnet_accept(fd, (struct sockaddr *)&ab.a, &alen);
            if (s >= 0) {
                CHECK(s >= LNET_FD_FIRST && s < LNET_FD_FIRST + LNET_SOCKETS);
                (void)lnet_close(s);
            }
            break;
        }
        case 6: {
            struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
                                  {.fd = nfd > 0 ? fds[0] : -1, .events = POLLOUT}};
            int r = lnet_poll(p, nfd > 0 ? 2 : 1, (int)(rnd() % 20), NULL);
            CHECK(r <= 2);
            for (unsigned i = 0; i < 2; i++) {
                CHECK((p[i].revents & ~(p[i].events | POLLERR | POLLHUP | POLLNVAL)) == 0);
            }
            break;
        }
        case 7: {
            int v = -1;
            socklen_t vl = sizeof(v);
            (void)lnet_getsockopt(fd, SOL_SOCKET, rnd() % 2 ? SO_ERROR : SO_KEEPALIVE, &v, &vl);
            CHECK(vl == sizeof(v));
            break;
        }
        case 8:
            (void)(rnd() % 2 ? lnet_getsockname(fd, (struct sockaddr *)&ab.a, &alen)
                             : lnet_getpeername(fd, (struct sockaddr *)&ab.a, &alen));
            break;
        case 9:
            (void)(rnd() % 2 ? lnet_bind(fd, (struct sockaddr *)&to, sizeof(to))
                             : lnet_listen(fd, (int)(rnd() % 8)));
            break;
        case 10: {
            int one = 1;
            (void)lnet_setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            (void)lnet_shutdown(fd, (int)(rnd() % 3));
            break;
        }
        default:
            if (nfd > 0) {
                unsigned i = rnd() % nfd;
                (void)lnet_close(fds[i]);
                fds[i] = fds[--nfd];
            }
            break;
        }
        check_guard(buf + want);
        check_guard(ab.guard);
        for (size_t i = given; i < sizeof(ab.a); i++) { /* nothing written past the length given */
            CHECK(((const uint8_t *)&ab.a)[i] == 0xA5);
        }
    }
    while (nfd > 0) {
        (void)lnet_close(fds[--nfd]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = 1.0;
    seed = (unsigned)time(NULL);
    if (!fuzz_args(argc, argv, &seed, &seconds)) {
        return 2;
    }
    printf("fuzz_net: seed %u\n", seed);
    rnd_seed(seed);
    svc_host_on_chan_close("rtmux-net", new_server);
    new_server();
    lnet_init();
    fuzz_clients(client, CLIENTS, seconds, &stopping);
    struct lsvc_stats s;
    lnet_stats(&s);
    printf("fuzz_net: %llu requests, %llu failed (%llu timed out); %llu sessions, %llu frames that lost "
           "the framing, %llu unknown tags, %llu bad replies\n",
           (unsigned long long)s.requests, (unsigned long long)s.errors, (unsigned long long)s.timeouts,
           (unsigned long long)s.sessions, (unsigned long long)s.bad_frames,
           (unsigned long long)s.unknown_tags, (unsigned long long)s.bad_replies);
    CHECK(s.requests > 100 && s.bad_frames > 0 && s.unknown_tags > 0 && s.bad_replies > 0 && s.timeouts > 0);
    if (unit_failures != 0) {
        fprintf(stderr, "fuzz_net: replay with --seed %u (thread timing varies: not exactly)\n", seed);
    }
    UNIT_DONE("fuzz_net");
}
