/*
 * Linux's daemon rtmux-netd (guest/rtmux-netd, built here with AddressSanitizer and
 * UndefinedBehaviorSanitizer) against a hostile rtos: after Tversion, requests of every type with
 * random lengths and fields (sids that exist and that do not, counts that lie, flags, options and
 * levels out of range, polls of up to and beyond NETP_POLL_MAX sockets), well-formed requests among
 * them (sockets made, bound, listening, connected, data sent and received), and new Tversions in the
 * middle. Every address it names is 127.0.0.1, on ports this test holds itself (or port 0): the daemon
 * does reach the network for them, and nothing but this test receives what it sends.
 *
 * Checked: every answer is well framed (size within the session's msize, Rlerror or the R type of a
 * request sent, a tag that was sent); the daemon answers a good request correctly after all of it;
 * it ends with status 0 when the rtos closes the channel, and with status 1 (not a signal, nor a
 * sanitizer's report) at a frame whose size loses the framing.
 *
 *   netd_hostile [--seed N] [--seconds S]
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "lib/netproto.h"
#include "svc_fuzz.h"

#ifndef NETD
#define NETD "rtmux-netd"
#endif

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ----------------------------------------------------------------------------------- the daemon */

/* The daemon on one end of a socket pair (*fd the other), as its supervisor starts it. A sanitizer's
 * report ends it with status 86 or 87, told apart from its own 0, 1 and 2; `quiet`: its stderr goes
 * nowhere (it says why it ends, which is expected here). */
static pid_t start_daemon(int *fd, bool quiet)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(sv[1], 3);
        for (int i = 4; i < 1024; i++) {
            close(i);
        }
        if (quiet) {
            freopen("/dev/null", "w", stderr);
        }
        setenv("ASAN_OPTIONS", "exitcode=86", 1);
        setenv("UBSAN_OPTIONS", "exitcode=87", 1);
        execl(NETD, "rtmux-netd", "--fd", "3", (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    *fd = sv[0];
    return pid;
}

/* The daemon's exit status (-1: it did not end within 5 s; 1000 + signal: killed by one). */
static int wait_daemon(pid_t pid)
{
    for (int i = 0; i < 500; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
        }
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

/* ------------------------------------------------------------------------------------- answers */

/* What the reader thread checks every answer against. */
static struct {
    pthread_mutex_t lock;
    int fd;
    uint16_t sent_type[65536]; /* per tag: 0x100 | the type last sent with it, 0 if none */
    uint32_t msize;
    uint64_t answers, errors, bad;
    bool wrapped;      /* tags were used again */
    uint32_t sids[64]; /* sockets the daemon made (Rsocket, Raccept) */
    unsigned nsids;
    volatile int done;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *reader(void *arg)
{
    (void)arg;
    static uint8_t buf[2 * NETP_MSIZE];
    size_t have = 0;
    while (!st.done) {
        struct pollfd p = {.fd = st.fd, .events = POLLIN};
        if (poll(&p, 1, 20) <= 0) {
            continue;
        }
        ssize_t n = recv(st.fd, buf + have, sizeof(buf) - have, 0);
        if (n <= 0) {
            break;
        }
        have += (size_t)n;
        size_t at = 0;
        while (have - at >= NETP_HDR) {
            uint32_t size = get32(buf + at);
            pthread_mutex_lock(&st.lock);
            bool framed = size >= NETP_HDR && size <= st.msize;
            pthread_mutex_unlock(&st.lock);
            CHECK(framed);
            if (!framed) {
                st.bad++;
                return NULL;
            }
            if (have - at < size) {
                break;
            }
            uint8_t type = buf[at + 4];
            uint16_t tag = (uint16_t)(buf[at + 5] | buf[at + 6] << 8);
            pthread_mutex_lock(&st.lock);
            uint16_t sent = st.sent_type[tag];
            /* (tags are used again after 65535 requests: then any answer type will do) */
            bool ok = sent != 0 && (type == NETP_RLERROR || type == (sent & 0xFFu) + 1u ||
                                    (st.wrapped && (type & 1u) != 0));
            CHECK(ok);
            st.answers++;
            st.errors += type == NETP_RLERROR;
            if (type == NETP_RLERROR) {
                CHECK(size == NETP_HDR + 4);
            }
            if ((type == NETP_RSOCKET || type == NETP_RACCEPT) && size >= NETP_HDR + 4 && st.nsids < 64) {
                st.sids[st.nsids++] = get32(buf + at + NETP_HDR);
            }
            if (type == NETP_RVERSION && size >= NETP_HDR + 4) {
                uint32_t m = get32(buf + at + NETP_HDR);
                st.msize = m < NETP_HDR ? NETP_MSIZE : m;
            }
            pthread_mutex_unlock(&st.lock);
            at += size;
        }
        memmove(buf, buf + at, have - at);
        have -= at;
    }
    return NULL;
}

static void send_frame(uint8_t *f, size_t n, uint8_t type, uint16_t tag)
{
    size_t at = 0;
    put(f, &at, n, 4);
    f[4] = type;
    f[5] = (uint8_t)tag;
    f[6] = (uint8_t)(tag >> 8);
    pthread_mutex_lock(&st.lock);
    st.sent_type[tag] = (uint16_t)(0x100u | type);
    pthread_mutex_unlock(&st.lock);
    size_t done = 0;
    while (done < n) {
        ssize_t k = send(st.fd, f + done, n - done, MSG_NOSIGNAL);
        if (k <= 0) {
            return;
        }
        done += (size_t)k;
    }
}

static uint16_t next_tag;

static uint16_t tag_new(void)
{
    if ((uint16_t)(next_tag + 1) == NETP_NOTAG) {
        pthread_mutex_lock(&st.lock);
        st.wrapped = true;
        pthread_mutex_unlock(&st.lock);
        next_tag = 0;
    }
    return ++next_tag;
}

static void version(uint32_t msize)
{
    uint8_t f[64];
    size_t n = 7;
    put(f, &n, msize, 4);
    put(f, &n, strlen(NETP_VERSION), 2);
    memcpy(f + n, NETP_VERSION, strlen(NETP_VERSION));
    n += strlen(NETP_VERSION);
    send_frame(f, n, NETP_TVERSION, NETP_NOTAG);
    usleep(20000);
}

static uint32_t some_sid(void)
{
    pthread_mutex_lock(&st.lock);
    uint32_t sid = st.nsids > 0 && rnd() % 4 != 0 ? st.sids[rnd() % st.nsids] : rnd();
    pthread_mutex_unlock(&st.lock);
    return sid;
}

/* Ports on 127.0.0.1 this test holds (4 listening TCP sockets, 4 UDP ones nobody reads): the daemon's
 * connects and sends reach them only; its binds to them fail. */
static uint16_t ports[8];

static void hold_ports(void)
{
    for (unsigned i = 0; i < 8; i++) {
        int fd = socket(AF_INET, i < 4 ? SOCK_STREAM : SOCK_DGRAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr = {htonl(INADDR_LOOPBACK)}};
        socklen_t len = sizeof(a);
        CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
              getsockname(fd, (struct sockaddr *)&a, &len) == 0 && (i >= 4 || listen(fd, 4) == 0));
        ports[i] = ntohs(a.sin_port);
    }
}

/* A port on 127.0.0.1 (network byte order, as the messages carry it). */
static void loopback(uint8_t *f, size_t *n, uint16_t port)
{
    static const uint8_t lo[4] = {127, 0, 0, 1};
    memcpy(f + *n, lo, 4);
    *n += 4;
    f[(*n)++] = (uint8_t)(port >> 8);
    f[(*n)++] = (uint8_t)port;
}

/* One request: random bytes or a random but well-formed one, of any type. */
static void hostile_request(void)
{
    static uint8_t f[NETP_MSIZE + 64];
    static const uint8_t types[] = {NETP_TSOCKET, NETP_TBIND, NETP_TLISTEN, NETP_TCONNECT,  NETP_TACCEPT,
                                    NETP_TSEND,   NETP_TRECV, NETP_TCLOSE,  NETP_TSHUTDOWN, NETP_TSETOPT,
                                    NETP_TGETOPT, NETP_TNAME, NETP_TPOLL};
    uint8_t type = rnd() % 10 == 0 ? (uint8_t)rnd() : types[rnd() % sizeof(types)];
    if (type == NETP_TVERSION) {
        type = NETP_TSOCKET;
    }
    size_t n = 7;
    uint16_t port = rnd() % 9 == 8 ? 0 : ports[rnd() % 8];
    uint32_t wait = rnd() % 3 == 0 ? rnd() : rnd() % 30;
    if (rnd() % 5 == 0) { /* random bytes of a random length */
        size_t len = rnd() % 3 == 0 ? rnd() % 64 : rnd() % 600;
        for (size_t i = 0; i < len; i++) {
            f[n++] = (uint8_t)rnd();
        }
        /* the address fields name 127.0.0.1 even so (Tbind, Tconnect, Tsend) */
        if (type == NETP_TBIND || type == NETP_TCONNECT) {
            if (len >= 10) {
                size_t at = 7 + 4;
                loopback(f, &at, port);
            }
        } else if (type == NETP_TSEND && len >= 19) {
            size_t at = 7 + 13;
            loopback(f, &at, port);
        }
    } else {
        switch (type) {
        case NETP_TSOCKET:
            put(f, &n, rnd() % 4, 1);
            break;
        case NETP_TBIND:
        case NETP_TCONNECT:
            put(f, &n, some_sid(), 4);
            loopback(f, &n, port);
            if (type == NETP_TCONNECT) {
                put(f, &n, wait, 4);
                put(f, &n, rnd() % 3, 1);
            }
            break;
        case NETP_TLISTEN:
            put(f, &n, some_sid(), 4);
            put(f, &n, rnd(), 4);
            break;
        case NETP_TACCEPT:
            put(f, &n, some_sid(), 4);
            put(f, &n, wait, 4);
            break;
        case NETP_TSEND: {
            put(f, &n, some_sid(), 4);
            put(f, &n, rnd() % 4 == 0 ? rnd() : 0, 4);
            put(f, &n, wait, 4);
            put(f, &n, rnd() % 3, 1);
            loopback(f, &n, port);
            uint32_t count = rnd() % 4 == 0 ? rnd() % 9000 : rnd() % 200;
            uint32_t said = rnd() % 6 == 0 ? rnd() % 10000 : count; /* sometimes a lie */
            put(f, &n, said, 4);
            for (uint32_t i = 0; i < count && n < sizeof(f); i++) {
                f[n++] = (uint8_t)rnd();
            }
            break;
        }
        case NETP_TRECV:
            put(f, &n, some_sid(), 4);
            put(f, &n, rnd() % 4 == 0 ? rnd() : rnd() % 2, 4);
            put(f, &n, wait, 4);
            put(f, &n, rnd() % 4 == 0 ? rnd() : rnd() % 9000, 4);
            break;
        case NETP_TCLOSE:
            put(f, &n, some_sid(), 4);
            break;
        case NETP_TSHUTDOWN:
        case NETP_TNAME:
            put(f, &n, some_sid(), 4);
            put(f, &n, rnd() % 4, 1);
            break;
        case NETP_TSETOPT:
        case NETP_TGETOPT:
            put(f, &n, some_sid(), 4);
            put(f, &n, rnd() % 8, 1);
            if (type == NETP_TSETOPT) {
                put(f, &n, rnd() % 3 == 0 ? rnd() : rnd() % 2, 4);
            }
            break;
        case NETP_TPOLL: {
            unsigned k = rnd() % 8 == 0 ? rnd() % 80 : 1 + rnd() % 4;
            put(f, &n, wait % 50, 4);
            put(f, &n, rnd() % 8 == 0 ? k + 1 : k, 2);
            for (unsigned i = 0; i < k; i++) {
                put(f, &n, some_sid(), 4);
                put(f, &n, rnd() % 4 == 0 ? rnd() : 1u << (rnd() % 3), 2);
            }
            break;
        }
        default:
            break;
        }
        if (rnd() % 10 == 0 && n > 8) { /* cut short or padded */
            n = rnd() % 2 ? n - 1 - rnd() % (n - 8) : n + rnd() % 4;
        }
    }
    pthread_mutex_lock(&st.lock);
    if (n > st.msize) { /* a frame above the session's msize loses the framing: not here */
        n = st.msize;
    }
    pthread_mutex_unlock(&st.lock);
    send_frame(f, n, type, tag_new());
}

/* A socket made, bound to 127.0.0.1:port, listening; a second connected to it: the daemon must still
 * do it all right after the hostile requests. Returns true when every answer was as expected. */
static bool good_session(uint16_t port)
{
    /* answers are read by the reader thread: here, just that it keeps answering with no Rlerror for
     * these (counted before and after) */
    pthread_mutex_lock(&st.lock);
    uint64_t answers = st.answers, errors = st.errors;
    st.nsids = 0;
    pthread_mutex_unlock(&st.lock);
    uint8_t f[64];
    size_t n = 7;
    put(f, &n, NETP_STREAM, 1);
    send_frame(f, n, NETP_TSOCKET, tag_new());
    for (int i = 0; i < 100; i++) {
        usleep(10000);
        pthread_mutex_lock(&st.lock);
        bool got = st.nsids > 0;
        pthread_mutex_unlock(&st.lock);
        if (got) {
            break;
        }
    }
    uint32_t sid = st.nsids > 0 ? st.sids[0] : 0;
    n = 7;
    put(f, &n, sid, 4);
    loopback(f, &n, port);
    send_frame(f, n, NETP_TBIND, tag_new());
    n = 7;
    put(f, &n, sid, 4);
    put(f, &n, 4, 4);
    send_frame(f, n, NETP_TLISTEN, tag_new());
    usleep(50000);
    pthread_mutex_lock(&st.lock);
    bool ok = st.answers == answers + 3 && st.errors == errors && st.nsids == 1;
    pthread_mutex_unlock(&st.lock);
    return ok;
}

int main(int argc, char **argv)
{
    double seconds = 1.0;
    unsigned seed = (unsigned)time(NULL);
    if (!fuzz_args(argc, argv, &seed, &seconds)) {
        return 2;
    }
    if (access(NETD, X_OK) != 0) {
        fprintf(stderr, "netd_hostile: %s not found\n", NETD);
        return 1;
    }
    printf("netd_hostile: seed %u\n", seed);
    rnd_seed(seed);
    signal(SIGPIPE, SIG_IGN);
    hold_ports();
    /* the hostile rtos, then a good session, then its end: status 0 */
    pid_t pid = start_daemon(&st.fd, false);
    st.msize = NETP_MSIZE;
    pthread_t rt;
    CHECK(pthread_create(&rt, NULL, reader, NULL) == 0);
    version(NETP_MSIZE);
    double start = now();
    unsigned requests = 0;
    while (now() - start < seconds) {
        hostile_request();
        requests++;
        if (rnd() % 500 == 0) { /* a new session in the middle (and now and then a smaller msize) */
            version(rnd() % 2 ? NETP_MSIZE : NETP_MSIZE_MIN + rnd() % 4000);
        }
        if (rnd() % 50 == 0) {
            usleep(1000);
        }
    }
    version(NETP_MSIZE); /* the hostile requests still waiting are dropped, unanswered */
    usleep(100000);
    CHECK(good_session(0));
    CHECK(kill(pid, 0) == 0); /* still there */
    st.done = 1;
    pthread_join(rt, NULL);
    close(st.fd);
    int status = wait_daemon(pid);
    CHECK(status == 0);
    printf("netd_hostile: %u requests, %llu answers (%llu Rlerror), the daemon ended with status %d\n",
           requests, (unsigned long long)st.answers, (unsigned long long)st.errors, status);
    /* a frame size out of range: the daemon says so and ends with status 1 */
    int fd;
    pid = start_daemon(&fd, true);
    uint8_t bad[7] = {3, 0, 0, 0, NETP_TVERSION, 0xFF, 0xFF};
    CHECK(send(fd, bad, sizeof(bad), MSG_NOSIGNAL) == (ssize_t)sizeof(bad));
    status = wait_daemon(pid);
    CHECK(status == 1);
    close(fd);
    pid = start_daemon(&fd, true);
    uint8_t big[7] = {0xFF, 0xFF, 0xFF, 0x7F, NETP_TSOCKET, 1, 0};
    CHECK(send(fd, big, sizeof(big), MSG_NOSIGNAL) == (ssize_t)sizeof(big));
    status = wait_daemon(pid);
    CHECK(status == 1);
    close(fd);
    UNIT_DONE("netd_hostile");
}
