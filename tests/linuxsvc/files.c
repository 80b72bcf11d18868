/*
 * Linux's files from rtos threads, in the whole system (tests/system/test_linux_services.py): an rtos
 * application using the POSIX calls on /linux/srv/rtos, the default system's writable export, while
 * Linux's script checks what it wrote and kills the 9P server in the middle of traffic.
 *
 * The steps, each told by a FILES| line the test reads:
 *   1. wait until Linux's script says it is ready (the file `ready`; until then ENOTCONN or ENOENT);
 *   2. files of 1 B to 1 MiB written and read back (the test compares Linux's md5sum of each with the
 *      pattern), by one thread and by six at once;
 *   3. a directory of 30 entries listed, stdio (fopen/fprintf/fgets), rename, unlink, rmdir;
 *   4. errors as POSIX says them: ENOENT, EACCES (outside the exports), EISDIR, ENOTDIR, EEXIST,
 *      ENOTEMPTY, ENOSPC (the test's second export, /srv/small, a 64 KiB tmpfs);
 *   5. `done` written; Linux then kills diod while reading threads loop: their calls fail (EIO, EBADF,
 *      ENOTCONN), never hang, and work again once Linux's supervisor has started a new one;
 *   6. `done2` written in the new session; exit with the number of failed checks.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "rtmux/linux.h"

#define BASE      "/linux/srv/rtos"
#define PATH_MAX_ 160

static void pattern(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        b[i] = (unsigned char)(i * 131u + seed * 7u + (i >> 9));
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void touch(const char *path)
{
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK_EQ(close(fd), 0);
}

/* Writes n bytes of pattern `seed` to path and reads them back; 0 when both match. */
static int roundtrip(const char *path, size_t n, unsigned seed)
{
    unsigned char *a = malloc(n), *b = malloc(n + 1);
    int bad = a == NULL || b == NULL;
    if (!bad) {
        pattern(a, n, seed);
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        bad |= fd < 0 || write(fd, a, n) != (ssize_t)n || close(fd) != 0;
        fd = open(path, O_RDONLY);
        bad |= fd < 0 || read(fd, b, n + 1) != (ssize_t)n || memcmp(a, b, n) != 0 || close(fd) != 0;
    }
    free(a);
    free(b);
    return bad;
}

static atomic_int thread_bad;

static void *writer(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    char path[PATH_MAX_];
    snprintf(path, sizeof(path), BASE "/t%u.bin", id);
    for (unsigned round = 0; round < 4; round++) {
        atomic_fetch_add(&thread_bad, roundtrip(path, 30000u + id * 1000u, id));
    }
    return NULL;
}

static void sizes_and_threads(void)
{
    static const size_t sizes[] = {1, 100, 4096, 8192, 8193, 65536, 1048576};
    char path[PATH_MAX_];
    for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        snprintf(path, sizeof(path), BASE "/size-%lu.bin", (unsigned long)sizes[i]);
        CHECK_EQ(roundtrip(path, sizes[i], (unsigned)sizes[i]), 0);
        printf("FILES| wrote size-%lu.bin %lu %u\n", (unsigned long)sizes[i], (unsigned long)sizes[i],
               (unsigned)sizes[i]);
    }
    pthread_t t[6];
    for (unsigned i = 0; i < 6; i++) {
        CHECK_EQ(pthread_create(&t[i], NULL, writer, (void *)(uintptr_t)i), 0);
    }
    for (unsigned i = 0; i < 6; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
        printf("FILES| wrote t%u.bin %u %u\n", i, 30000u + i * 1000u, i);
    }
    CHECK_EQ(atomic_load(&thread_bad), 0);
}

static void directories_and_stdio(void)
{
    char path[PATH_MAX_], to[PATH_MAX_];
    CHECK_EQ(mkdir(BASE "/list", 0755), 0);
    for (unsigned i = 0; i < 30; i++) {
        snprintf(path, sizeof(path), BASE "/list/entry-%02u", i);
        touch(path);
    }
    DIR *d = opendir(BASE "/list");
    CHECK(d != NULL);
    unsigned entries = 0, dots = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            dots++;
        } else {
            CHECK(strncmp(e->d_name, "entry-", 6) == 0 && e->d_type == DT_REG);
            entries++;
        }
    }
    CHECK_EQ(entries, 30);
    CHECK_EQ(dots, 2);
    CHECK_EQ(d != NULL ? closedir(d) : -1, 0);
    printf("FILES| listed list %u\n", entries);

    FILE *f = fopen(BASE "/stdio.txt", "w");
    CHECK(f != NULL);
    for (int i = 0; f != NULL && i < 5; i++) {
        fprintf(f, "line %d of %d: %.3f\n", i, 5, i * 1.5);
    }
    CHECK_EQ(f != NULL ? fclose(f) : -1, 0);
    f = fopen(BASE "/stdio.txt", "r");
    char line[64];
    int lines = 0;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        char want[64];
        snprintf(want, sizeof(want), "line %d of %d: %.3f\n", lines, 5, lines * 1.5);
        CHECK(strcmp(line, want) == 0);
        lines++;
    }
    CHECK_EQ(lines, 5);
    CHECK_EQ(f != NULL ? fclose(f) : -1, 0);

    snprintf(path, sizeof(path), BASE "/list/entry-00");
    snprintf(to, sizeof(to), BASE "/renamed");
    CHECK_EQ(rename(path, to), 0);
    CHECK_EQ(exists(path), 0);
    CHECK_EQ(exists(to), 1);
    CHECK_EQ(unlink(to), 0);
    CHECK_EQ(rmdir(BASE "/list"), -1);
    CHECK_EQ(errno, ENOTEMPTY);
    for (unsigned i = 1; i < 30; i++) {
        snprintf(path, sizeof(path), BASE "/list/entry-%02u", i);
        CHECK_EQ(unlink(path), 0);
    }
    CHECK_EQ(rmdir(BASE "/list"), 0);
}

static void expect_errno(int r, int want, const char *what)
{
    if (r != -1 || errno != want) {
        printf("FAIL %s: returned %d errno %d, expected -1 errno %d\n", what, r, errno, want);
        check_failed++;
    } else {
        check_passed++;
    }
}

static void errors(void)
{
    struct stat st;
    expect_errno(open(BASE "/no/such/file", O_RDONLY), ENOENT, "open missing");
    expect_errno(stat(BASE "/missing", &st), ENOENT, "stat missing");
    expect_errno(open("/linux/etc/passwd", O_RDONLY), EACCES, "outside the export");
    expect_errno(open(BASE "/../../etc/passwd", O_RDONLY), EACCES, "up out of the export");
    expect_errno(open("/etc/passwd", O_RDONLY), ENOENT, "not under /linux");
    expect_errno(open(BASE, O_WRONLY), EISDIR, "a directory for writing");
    expect_errno(open(BASE "/size-1.bin/x", O_RDONLY), ENOTDIR, "through a file");
    expect_errno(open(BASE "/size-1.bin", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST, "O_EXCL");
    expect_errno(mkdir(BASE "/list", 0755) == 0 ? mkdir(BASE "/list", 0755) : 0, EEXIST,
                 "mkdir over a directory");
    CHECK_EQ(rmdir(BASE "/list"), 0);
    /* ENOSPC: the test's second export is a 64 KiB tmpfs */
    int fd = open("/linux/srv/small/fill.bin", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= 0);
    static unsigned char chunk[8192];
    ssize_t r = 0;
    size_t total = 0;
    for (int i = 0; i < 64 && r >= 0; i++) {
        r = write(fd, chunk, sizeof(chunk));
        total += r > 0 ? (size_t)r : 0;
    }
    expect_errno((int)r, ENOSPC, "writing a full file system");
    CHECK(total >= 32768 && total <= 65536);
    r = close(fd); /* the close in Linux may report ENOSPC too: the descriptor is free either way */
    CHECK(r == 0 || errno == ENOSPC);
    CHECK_EQ(unlink("/linux/srv/small/fill.bin"), 0);
    expect_errno(close(fd), EBADF, "close twice");
    printf("FILES| errors checked\n");
}

/* ------------------------------------------------------------------------------ the server dies */

static atomic_int stop_readers;
static atomic_int seen_eio, seen_ebadf, seen_enotconn, seen_other, reads_ok;

static void *reader(void *arg)
{
    (void)arg;
    static unsigned char buf[8192];
    while (!atomic_load(&stop_readers)) {
        int fd = open(BASE "/size-65536.bin", O_RDONLY);
        if (fd < 0) {
            int e = errno;
            atomic_fetch_add(e == ENOTCONN ? &seen_enotconn : e == EIO ? &seen_eio : &seen_other, 1);
            sleep_ms(20);
            continue;
        }
        for (;;) {
            ssize_t n = read(fd, buf, sizeof(buf));
            if (n > 0) {
                atomic_fetch_add(&reads_ok, 1);
                continue;
            }
            if (n < 0) {
                int e = errno;
                atomic_fetch_add(e == EIO ? &seen_eio : e == EBADF ? &seen_ebadf : &seen_other, 1);
            }
            break;
        }
        (void)close(fd);
    }
    return NULL;
}

static void server_dies(void)
{
    pthread_t t[3];
    for (unsigned i = 0; i < 3; i++) {
        CHECK_EQ(pthread_create(&t[i], NULL, reader, NULL), 0);
    }
    touch(BASE "/done"); /* Linux's script kills diod once it sees this */
    struct rtmux_linux_stats s0, s;
    CHECK_EQ(rtmux_linux_stats(&s0), 0);
    /* until a new session has begun and served reads, at most 60 s of guest time */
    int ok_after = 0;
    for (int i = 0; i < 600; i++) {
        sleep_ms(100);
        CHECK_EQ(rtmux_linux_stats(&s), 0);
        if (s.files.lost > s0.files.lost && s.files.sessions > s0.files.sessions) {
            int before = atomic_load(&reads_ok);
            sleep_ms(300);
            ok_after = atomic_load(&reads_ok) - before;
            break;
        }
    }
    atomic_store(&stop_readers, 1);
    for (unsigned i = 0; i < 3; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    }
    CHECK(s.files.lost > s0.files.lost);
    CHECK(ok_after > 0);
    CHECK_EQ(atomic_load(&seen_other), 0);
    printf("FILES| server restart: lost %llu sessions %llu, errors EIO %d EBADF %d ENOTCONN %d, reads after "
           "%d\n",
           (unsigned long long)s.files.lost, (unsigned long long)s.files.sessions, atomic_load(&seen_eio),
           atomic_load(&seen_ebadf), atomic_load(&seen_enotconn), ok_after);
    touch(BASE "/done2");
}

int main(void)
{
    struct rtmux_linux_stats s;
    CHECK_EQ(rtmux_linux_stats(&s), 0);
    int waited = 0;
    while (!exists(BASE "/ready") && waited < 1200) { /* Linux boots after the rtos: up to 120 s */
        CHECK(errno == ENOTCONN || errno == ENOENT || errno == EIO); /* EIO: the script restarts diod */
        sleep_ms(100);
        waited++;
    }
    printf("FILES| ready after %d ms\n", waited * 100);
    sizes_and_threads();
    directories_and_stdio();
    errors();
    server_dies();
    CHECK_EQ(rtmux_linux_stats(&s), 0);
    printf("FILES| stats requests %llu errors %llu timeouts %llu sessions %llu lost %llu bad_frames %llu "
           "unknown_tags %llu bad_replies %llu\n",
           (unsigned long long)s.files.requests, (unsigned long long)s.files.errors,
           (unsigned long long)s.files.timeouts, (unsigned long long)s.files.sessions,
           (unsigned long long)s.files.lost, (unsigned long long)s.files.bad_frames,
           (unsigned long long)s.files.unknown_tags, (unsigned long long)s.files.bad_replies);
    POSIX_TEST_END("linux files");
}
