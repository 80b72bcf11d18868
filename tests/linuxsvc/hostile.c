/*
 * A hostile Linux against the rtos's file client, in the whole system (tests/system/
 * test_linux_services.py): Linux's script stops its file server and runs rtmux-hostile9p on the channel
 * instead (guest/rtmux-hostile9p), which answers each request with the next misbehaviour of its cycle.
 *
 *   1. wait for `ready`, write `hostile-go` through the real server (Linux then swaps in the hostile
 *      one) and wait until that session ends;
 *   2. HOSTILE_CALLS calls that reach Linux (ENOTCONN while nothing is connected does not count), each
 *      on buffers with guards on both sides, none of which may change; the code and read-only data's
 *      checksum must not change either;
 *   3. the counters say each kind of refusal happened (framing lost, unknown tag, bad reply);
 *   4. once Linux has the real server back, `after.txt` reads "recovered-42": the client works again;
 *      `hostile-done` tells Linux's script so.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "rtmux/linux.h"

#define BASE          "/linux/srv/rtos"
#define HOSTILE_CALLS 90
#define GUARD         64

extern const uint8_t _start[], _rodata_end[];

static uint32_t code_sum(void)
{
    uint32_t h = 2166136261u; /* FNV-1a over code and read-only data */
    for (const uint8_t *p = _start; p < _rodata_end; p++) {
        h = (h ^ *p) * 16777619u;
    }
    return h;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static struct {
    uint8_t front[GUARD];
    uint8_t buf[8192];
    uint8_t back[GUARD];
} io;

static int guards_ok(void)
{
    for (int i = 0; i < GUARD; i++) {
        if (io.front[i] != 0xA5 || io.back[i] != 0x5A) {
            return 0;
        }
    }
    return 1;
}

/* One call of the cycle; returns its errno (0: it succeeded, whatever Linux said). */
static int one_call(int i)
{
    struct stat st;
    int r;
    switch (i % 4) {
    case 0:
        r = stat(BASE "/a", &st);
        break;
    case 1: {
        int fd = open(BASE "/a", O_RDONLY);
        if (fd < 0) {
            r = -1;
            break;
        }
        ssize_t n = read(fd, io.buf, 100);
        CHECK(n <= 100);
        r = n < 0 ? -1 : 0;
        int e = errno;
        (void)close(fd);
        errno = e;
        break;
    }
    case 2: {
        int fd = open(BASE "/b", O_RDWR | O_CREAT, 0644);
        if (fd < 0) {
            r = -1;
            break;
        }
        r = write(fd, io.buf, 64) < 0 ? -1 : 0;
        int e = errno;
        (void)close(fd);
        errno = e;
        break;
    }
    default:
        r = mkdir(BASE "/d", 0755);
        break;
    }
    return r == 0 ? 0 : errno;
}

int main(void)
{
    uint32_t sum = code_sum();
    memset(io.front, 0xA5, GUARD);
    memset(io.back, 0x5A, GUARD);
    struct stat st;
    for (int i = 0; stat(BASE "/ready", &st) != 0; i++) {
        if (i == 1200) {
            printf("HOSTILE| error: no ready in 120 s\n");
            return 1;
        }
        sleep_ms(100);
    }
    struct rtmux_linux_stats s0, s;
    CHECK_EQ(rtmux_linux_stats(&s0), 0);
    int fd = open(BASE "/hostile-go", O_CREAT | O_WRONLY, 0644); /* Linux swaps its server on it */
    CHECK(fd >= 0);
    CHECK_EQ(fd >= 0 ? close(fd) : -1, 0);
    for (int i = 0; i < 600; i++) { /* the real server's session ends */
        CHECK_EQ(rtmux_linux_stats(&s), 0);
        if (s.files.lost > s0.files.lost) {
            break;
        }
        (void)stat(BASE "/ready", &st);
        sleep_ms(100);
    }
    CHECK(s.files.lost > s0.files.lost);
    printf("HOSTILE| swapping\n");
    int reached = 0, failed = 0, waited = 0;
    while (reached < HOSTILE_CALLS && waited < 600) {
        int e = one_call(reached + waited);
        CHECK(guards_ok());
        if (e == ENOTCONN) { /* nothing connected (the swap): not a call that reached Linux */
            waited++;
            sleep_ms(100);
            continue;
        }
        reached++;
        failed += e != 0;
    }
    CHECK_EQ(rtmux_linux_stats(&s), 0);
    printf("HOSTILE| calls %d failed %d; bad_frames %llu unknown_tags %llu bad_replies %llu sessions %llu\n",
           reached, failed, (unsigned long long)s.files.bad_frames, (unsigned long long)s.files.unknown_tags,
           (unsigned long long)s.files.bad_replies, (unsigned long long)s.files.sessions);
    CHECK_EQ(reached, HOSTILE_CALLS);
    CHECK(s.files.bad_frames > 0 && s.files.unknown_tags > 0 && s.files.bad_replies > 0);
    CHECK(code_sum() == sum);
    /* Linux puts its real server back and writes after.txt through it */
    char text[32] = {0};
    int ok = 0;
    for (int i = 0; i < 1200 && !ok; i++) {
        fd = open(BASE "/after.txt", O_RDONLY);
        if (fd >= 0) {
            ssize_t n = read(fd, text, sizeof(text) - 1);
            (void)close(fd);
            ok = n == 12 && memcmp(text, "recovered-42", 12) == 0;
        }
        if (!ok) {
            sleep_ms(100);
        }
    }
    CHECK(ok);
    printf("HOSTILE| recovered %d\n", ok);
    fd = open(BASE "/hostile-done", O_CREAT | O_WRONLY, 0644); /* Linux's script ends on it */
    CHECK(fd >= 0);
    CHECK_EQ(fd >= 0 ? close(fd) : -1, 0);
    CHECK(guards_ok());
    POSIX_TEST_END("linux hostile");
}
