/*
 * Fuzzer of the rtos's file client (rtos/linuxsvc/: the 9P session, its reader and the file calls),
 * built natively with AddressSanitizer and UndefinedBehaviorSanitizer, against a hostile server on the
 * other end of the channel (svc_host.c's socket). Client threads call open/read/write/pread/stat/
 * readdir/mkdir/unlink/rename/close at random; the server answers each request correctly, with an
 * error, a wrong tag, twice, with the wrong type, a malformed body, a count that lies, split into
 * pieces, not at all, or with garbage and sizes out of range that lose the framing (the client then
 * drops the connection: a new server takes over, as Linux's supervisor would start one).
 *
 * Checked: no memory error (the sanitizers), every read returns at most what was asked and never
 * writes past it (a guard after the buffer), every call returns (a request without an answer fails
 * after the short timeout this build sets), and each way of misbehaving was met and counted.
 *
 *   fuzz_svc [--seed N] [--seconds S]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "linuxsvc/files.h"
#include "svc_fuzz.h"
#include "svc_host.h"

#define CLIENTS 4u

static unsigned seed;
static volatile int stopping;

/* ------------------------------------------------------------------------------------ the server */

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

/* A body that answers request type t well: what each reply of files.c's requests holds. */
static size_t good_body(uint8_t t, const uint8_t *req, size_t req_len, uint8_t *b)
{
    size_t n = 0;
    switch (t) {
    case 100: { /* Rversion: msize, "9P2000.L" (now and then another msize or version) */
        uint32_t msize = rnd() % 8 == 0 ? rnd() % 20000 : 8216;
        put(b, &n, msize, 4);
        const char *v = rnd() % 10 == 0 ? "9P2000.u" : "9P2000.L";
        put(b, &n, 8, 2);
        memcpy(b + n, v, 8);
        n += 8;
        break;
    }
    case 104:
    case 72: /* Rattach, Rmkdir: a qid */
        put(b, &n, rnd() % 2 ? 0x80 : 0, 1);
        put(b, &n, rnd(), 4);
        put(b, &n, rnd(), 8);
        break;
    case 110: { /* Rwalk: as many qids as names (sometimes fewer) */
        unsigned names = req_len >= 17 ? (unsigned)(req[15] | req[16] << 8) : 0;
        unsigned k = rnd() % 5 == 0 && names > 0 ? rnd() % names : names;
        put(b, &n, k, 2);
        for (unsigned i = 0; i < k && i < 16; i++) {
            put(b, &n, rnd() % 3 ? 0x80 : 0, 1);
            put(b, &n, rnd(), 4);
            put(b, &n, rnd(), 8);
        }
        break;
    }
    case 12:
    case 14: /* Rlopen, Rlcreate: qid, iounit */
        put(b, &n, rnd() % 2 ? 0x80 : 0, 1);
        put(b, &n, rnd(), 4);
        put(b, &n, rnd(), 8);
        put(b, &n, 0, 4);
        break;
    case 116: { /* Rread: count, data (sometimes more than asked) */
        uint32_t want =
            req_len >= 23 ? (uint32_t)(req[19] | req[20] << 8 | req[21] << 16 | (uint32_t)req[22] << 24) : 0;
        uint32_t k = rnd() % 6 == 0 ? want + 1 + rnd() % 64 : (want == 0 ? 0 : rnd() % (want + 1));
        if (k > 8192) {
            k = 8192;
        }
        put(b, &n, k, 4);
        for (uint32_t i = 0; i < k; i++) {
            b[n++] = (uint8_t)rnd();
        }
        break;
    }
    case 40: { /* Rreaddir: entries, some malformed */
        size_t at = n;
        n += 4;
        unsigned k = rnd() % 6;
        for (unsigned i = 0; i < k; i++) {
            put(b, &n, rnd() % 2 ? 0x80 : 0, 1);
            put(b, &n, rnd(), 4);
            put(b, &n, rnd(), 8);
            put(b, &n, rnd(), 8);
            put(b, &n, rnd() % 16, 1);
            unsigned len = rnd() % 8 == 0 ? 300 + rnd() % 50 : 1 + rnd() % 20;
            put(b, &n, rnd() % 10 == 0 ? len + 5 : len, 2);
            for (unsigned j = 0; j < len; j++) {
                b[n++] = (uint8_t)(rnd() % 10 == 0 ? rnd() : 'a' + rnd() % 26);
            }
        }
        size_t count = n - at - 4;
        put(b, &at, count, 4);
        break;
    }
    case 24: /* Rgetattr: 153 bytes */
        for (unsigned i = 0; i < 153; i++) {
            b[n++] = (uint8_t)rnd();
        }
        break;
    case 118: { /* Rwrite: a count, sometimes more than was sent */
        uint32_t sent =
            req_len >= 23 ? (uint32_t)(req[19] | req[20] << 8 | req[21] << 16 | (uint32_t)req[22] << 24) : 0;
        put(b, &n, rnd() % 6 == 0 ? sent + 1 : sent, 4);
        break;
    }
    default: /* Rclunk, Rremove, Rrename, Rsetattr, Rfsync: empty */
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
        uint32_t size = (uint32_t)(req[0] | req[1] << 8 | req[2] << 16 | (uint32_t)req[3] << 24);
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
        if (mode < 55 || type == 100) { /* a good reply (Tversion: always, or nothing would work) */
            n += good_body(type, req, size, out + 7);
            told[0]++;
        } else if (mode < 68) { /* Rlerror */
            rtype = 7;
            put(out, &n, rnd() % 130, 4);
            told[1]++;
        } else if (mode < 73) { /* a tag nobody sent */
            tag = (uint16_t)rnd();
            n += good_body(type, req, size, out + 7);
            told[2]++;
        } else if (mode < 78) { /* the wrong type */
            rtype = (uint8_t)(rnd() % 2 ? 101 + 2 * (rnd() % 10) : 117);
            n += good_body(type, req, size, out + 7);
            told[3]++;
        } else if (mode < 83) { /* a body cut short or padded */
            n += good_body(type, req, size, out + 7);
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
            n = 7;
            put(out, &(size_t){0}, rnd() % 2 ? rnd() % 7 : 0x100000 + rnd(), 4);
            out[4] = rtype;
            out[5] = (uint8_t)tag;
            out[6] = (uint8_t)(tag >> 8);
            send_all(fd, out, 7, false);
            told[7]++;
            continue;
        } else { /* a good reply, in pieces, sometimes twice */
            n += good_body(type, req, size, out + 7);
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
    if (stopping) {
        svc_host_set_fd(-1);
        return;
    }
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(pthread_create(&servers[n_servers++], NULL, server, (void *)(intptr_t)sv[1]) == 0);
    svc_host_set_fd(sv[0]);
}

/* ------------------------------------------------------------------------------------- the clients */

#define GUARD 64u

static void *client(void *arg)
{
    (void)arg;
    static const char *paths[] = {"/linux/srv/rtos/a", "/linux/srv/rtos/d/b", "/linux/srv/rtos",
                                  "/linux/srv/rtos/d/../c", "/linux/srv/rtos/x/y/z/w"};
    uint8_t buf[9000 + GUARD];
    int fds[8];
    unsigned nfd = 0;
    while (!stopping) {
        const char *p = paths[rnd() % 5];
        size_t want = rnd() % 9000;
        memset(buf + want, 0xA5, GUARD);
        struct stat st;
        switch (rnd() % 10) {
        case 0:
        case 1: {
            int fd = lfs_open(p, (int)(rnd() % 3) | (rnd() % 2 ? O_CREAT : 0), 0644);
            if (fd >= 0 && nfd < 8) {
                fds[nfd++] = fd;
            } else if (fd >= 0) {
                (void)lfs_close(fd);
            }
            break;
        }
        case 2:
        case 3:
            if (nfd > 0) {
                ssize_t r = rnd() % 2 ? lfs_read(fds[rnd() % nfd], buf, want)
                                      : lfs_pread(fds[rnd() % nfd], buf, want, rnd() % 100);
                CHECK(r <= (ssize_t)want);
            }
            break;
        case 4:
            if (nfd > 0) {
                ssize_t r = lfs_write(fds[rnd() % nfd], buf, want);
                CHECK(r <= (ssize_t)want);
            }
            break;
        case 5:
            (void)lfs_stat(p, &st);
            break;
        case 6:
            if (nfd > 0) {
                ssize_t r = lfs_readdir(fds[rnd() % nfd], buf, want);
                CHECK(r <= (ssize_t)want);
                size_t pos = 0;
                struct p9_dirent e;
                bool bad;
                while (r > 0 && p9_next_dirent(buf, (size_t)r, &pos, &e, &bad)) {
                    CHECK(pos <= (size_t)r && e.name_len > 0);
                }
            }
            break;
        case 7:
            (void)(rnd() % 2 ? lfs_unlink(p) : lfs_mkdir(p, 0755));
            break;
        case 8:
            (void)lfs_rename(p, paths[rnd() % 5]);
            break;
        default:
            if (nfd > 0) {
                unsigned i = rnd() % nfd;
                (void)lfs_close(fds[i]);
                fds[i] = fds[--nfd];
            }
            break;
        }
        for (unsigned i = 0; i < GUARD; i++) {
            CHECK(buf[want + i] == 0xA5);
        }
    }
    while (nfd > 0) {
        (void)lfs_close(fds[--nfd]);
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
    printf("fuzz_svc: seed %u\n", seed);
    rnd_seed(seed);
    const char *exports[] = {"/srv/rtos"};
    const bool ro[] = {false};
    svc_host_set_exports(exports, ro, 1);
    svc_host_on_close(new_server);
    new_server();
    lfs_init();
    fuzz_clients(client, CLIENTS, seconds, &stopping);
    struct lsvc_stats s;
    lfs_stats(&s);
    printf("fuzz_svc: %llu requests, %llu failed (%llu timed out); %llu sessions, %llu frames that lost "
           "the framing, %llu unknown tags, %llu bad replies\n",
           (unsigned long long)s.requests, (unsigned long long)s.errors, (unsigned long long)s.timeouts,
           (unsigned long long)s.sessions, (unsigned long long)s.bad_frames,
           (unsigned long long)s.unknown_tags, (unsigned long long)s.bad_replies);
    CHECK(s.requests > 100 && s.bad_frames > 0 && s.unknown_tags > 0 && s.bad_replies > 0 && s.timeouts > 0);
    if (unit_failures != 0) {
        fprintf(stderr, "fuzz_svc: replay with --seed %u (thread timing varies: not exactly)\n", seed);
    }
    UNIT_DONE("fuzz_svc");
}
