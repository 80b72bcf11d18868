/*
 * rtmux-hostile9p: a hostile Linux-side file server for the rtos (tests/system/test_linux_services.py).
 * It takes the place of diod on the rtmux-files channel, answers Tversion properly (so the rtos starts
 * a session) and then every request with the next misbehaviour of a fixed cycle:
 *
 *   tag        a reply with a tag nobody sent            dup      a plausible reply, twice
 *   type       a reply of another type                   short    Rgetattr's body cut short
 *   readmore   Rread with more data than asked           readlie  Rread whose count is not its data
 *   walkmore   Rwalk with more qids than names           errno0   Rlerror with errno 0
 *   tiny       a frame size below the header             huge     a frame size of 2 GiB
 *   garbage    40 bytes of noise                         good     a plausible reply
 *
 * The framing-losing ones (tiny, huge, garbage) make the rtos close and reopen its end: the port then
 * reads end of file, and this program opens it again and goes on with the cycle.
 *
 *   rtmux-hostile9p PORT [-n REQUESTS]      default 120; PORT: a name under /dev/virtio-ports or a path
 *
 * Ends after REQUESTS requests, printing `rtmux-hostile9p: N requests, M reconnections` and one
 * `rtmux-hostile9p: MODE N` line per misbehaviour; exit status 0, 2 for a usage error, 1 when the port
 * cannot be opened for 60 s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum mode { TAG, DUP, TYPE, SHORT, READMORE, READLIE, WALKMORE, ERRNO0, TINY, HUGE, GARBAGE, GOOD, MODES };
static const char *const mode_names[MODES] = {"tag",      "dup",    "type", "short", "readmore", "readlie",
                                              "walkmore", "errno0", "tiny", "huge",  "garbage",  "good"};
static unsigned long told[MODES];

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int open_port(const char *path)
{
    for (int i = 0; i < 1200; i++) {
        int fd = open(path, O_RDWR);
        if (fd >= 0) {
            return fd;
        }
        sleep_ms(50);
    }
    fprintf(stderr, "rtmux-hostile9p: cannot open %s: %s\n", path, strerror(errno));
    exit(1);
}

/* Reads exactly n bytes; 0 at end of file (the rtos closed its end). */
static int read_all(int fd, uint8_t *b, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = read(fd, b + done, n - done);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            return 0;
        }
        done += (size_t)k;
    }
    return 1;
}

static void write_all(int fd, const uint8_t *b, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(fd, b + done, n - done);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            return;
        }
        done += (size_t)k;
    }
}

static void put(uint8_t *b, size_t *n, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++) {
        b[(*n)++] = (uint8_t)(v >> (8 * i));
    }
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void qid(uint8_t *b, size_t *n, int dir)
{
    put(b, n, dir ? 0x80 : 0, 1);
    put(b, n, 0, 4);
    put(b, n, 0x1234, 8);
}

/* A plausible body answering request type t (its message in req). */
static size_t body(const uint8_t *req, size_t len, uint8_t *b)
{
    size_t n = 0;
    switch (req[4]) {
    case 104: /* Tattach */
    case 72:  /* Tmkdir */
        qid(b, &n, 1);
        break;
    case 110: { /* Twalk: a qid per name, every one a directory but a last "file" */
        unsigned names = len >= 17 ? (unsigned)(req[15] | req[16] << 8) : 0;
        put(b, &n, names, 2);
        for (unsigned i = 0; i < names && i < 16; i++) {
            qid(b, &n, i + 1 < names);
        }
        break;
    }
    case 12: /* Tlopen, Tlcreate */
    case 14:
        qid(b, &n, 0);
        put(b, &n, 0, 4);
        break;
    case 116: { /* Tread: at most 16 bytes of 'x' */
        uint32_t want = len >= 23 ? get32(req + 19) : 0;
        uint32_t k = want < 16 ? want : 16;
        put(b, &n, k, 4);
        memset(b + n, 'x', k);
        n += k;
        break;
    }
    case 118: /* Twrite */
        put(b, &n, len >= 23 ? get32(req + 19) : 0, 4);
        break;
    case 24: /* Tgetattr */
        memset(b, 0, 153);
        b[0] = 0xff;
        n = 153;
        break;
    case 40: /* Treaddir: nothing more */
        put(b, &n, 0, 4);
        break;
    default: /* Tclunk, Tremove, Trename, Tsetattr, Tfsync: empty */
        break;
    }
    return n;
}

static void reply(int fd, uint8_t type, uint16_t tag, const uint8_t *b, size_t n)
{
    uint8_t out[9000];
    size_t at = 0;
    put(out, &at, 7 + n, 4);
    put(out, &at, type, 1);
    put(out, &at, tag, 2);
    memcpy(out + at, b, n);
    write_all(fd, out, 7 + n);
}

int main(int argc, char **argv)
{
    if (argc != 2 && !(argc == 4 && strcmp(argv[2], "-n") == 0)) {
        fprintf(stderr, "usage: rtmux-hostile9p PORT [-n REQUESTS]\n");
        return 2;
    }
    char path[256];
    snprintf(path, sizeof(path), strchr(argv[1], '/') ? "%s" : "/dev/virtio-ports/%s", argv[1]);
    unsigned long requests = argc == 4 ? strtoul(argv[3], NULL, 10) : 120, seen = 0, reconnections = 0;
    int fd = open_port(path);
    unsigned next = 0;
    static uint8_t req[70000], b[9000];
    while (seen < requests) {
        if (!read_all(fd, req, 4)) {
            close(fd);
            reconnections++;
            sleep_ms(20);
            fd = open_port(path);
            continue;
        }
        uint32_t size = get32(req);
        if (size < 7 || size > sizeof(req) || !read_all(fd, req + 4, size - 4)) {
            close(fd);
            reconnections++;
            fd = open_port(path);
            continue;
        }
        uint8_t type = req[4], rtype = (uint8_t)(type + 1);
        uint16_t tag = (uint16_t)(req[5] | req[6] << 8);
        if (type == 100) { /* Tversion: answered well, or no session ever starts */
            size_t n = 0;
            put(b, &n, get32(req + 7), 4);
            put(b, &n, 8, 2);
            memcpy(b + n, "9P2000.L", 8);
            reply(fd, 101, tag, b, n + 8);
            continue;
        }
        seen++;
        enum mode m = (enum mode)(next++ % MODES);
        told[m]++;
        size_t n = body(req, size, b);
        switch (m) {
        case TAG:
            reply(fd, rtype, (uint16_t)(tag ^ 0x5555u), b, n);
            break;
        case DUP:
            reply(fd, rtype, tag, b, n);
            reply(fd, rtype, tag, b, n);
            break;
        case TYPE:
            reply(fd, type == 120 ? 117 : 121, tag, b, 0);
            break;
        case SHORT:
            reply(fd, rtype, tag, b, n > 2 ? n / 2 : 1);
            break;
        case READMORE: { /* an Rread of 200 bytes whatever was asked (each request is at most 8 KiB) */
            size_t k = 0;
            put(b, &k, 200, 4);
            memset(b + k, 'y', 200);
            reply(fd, type == 116 ? 117 : rtype, tag, b, type == 116 ? 204 : n);
            break;
        }
        case READLIE: { /* count 100, 10 bytes */
            size_t k = 0;
            put(b, &k, 100, 4);
            memset(b + k, 'z', 10);
            reply(fd, type == 116 ? 117 : rtype, tag, b, type == 116 ? 14 : n);
            break;
        }
        case WALKMORE: {
            size_t k = 0;
            put(b, &k, 3, 2);
            for (int i = 0; i < 3; i++) {
                qid(b, &k, 1);
            }
            reply(fd, type == 110 ? 111 : rtype, tag, b, type == 110 ? k : n);
            break;
        }
        case ERRNO0: {
            size_t k = 0;
            put(b, &k, 0, 4);
            reply(fd, 7, tag, b, 4);
            break;
        }
        case TINY: {
            uint8_t f[7] = {3, 0, 0, 0, rtype, (uint8_t)tag, (uint8_t)(tag >> 8)};
            write_all(fd, f, sizeof(f));
            break;
        }
        case HUGE: {
            uint8_t f[7] = {0, 0, 0, 0x80, rtype, (uint8_t)tag, (uint8_t)(tag >> 8)};
            write_all(fd, f, sizeof(f));
            break;
        }
        case GARBAGE:
            for (int i = 0; i < 40; i++) {
                b[i] = (uint8_t)(i * 37 + 11);
            }
            write_all(fd, b, 40);
            break;
        default:
            reply(fd, rtype, tag, b, n);
            break;
        }
    }
    printf("rtmux-hostile9p: %lu requests, %lu reconnections\n", seen, reconnections);
    for (int m = 0; m < MODES; m++) {
        printf("rtmux-hostile9p: %s %lu\n", mode_names[m], told[m]);
    }
    close(fd);
    return 0;
}
