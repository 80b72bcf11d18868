/*
 * The rtos's file client (rtos/linuxsvc/) against Debian's diod on the host, through a socket pair in
 * place of the V-Bus channel (svc_host.c), with the options Linux's supervisor gives it: every call's
 * result and the files' bytes as Linux sees them, many threads at once, and the server killed and
 * started again in the middle (in-flight calls fail, old descriptors give EBADF, new calls ENOTCONN,
 * then it all works again).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "linuxsvc/files.h"
#include "svc_host.h"

#ifndef DIOD
#define DIOD "/usr/sbin/diod"
#endif

static char base[64]; /* the host folder the exports live in */
static char rw[128], ro[128];
static pid_t server;

/* diod serving one connection on fd 3, as Linux's supervisor starts it (the ro export from a config
 * file: the command line has only global export options). */
static void start_server(void)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    char conf[160];
    snprintf(conf, sizeof(conf), "%s/diod.conf", base);
    server = fork();
    CHECK(server >= 0);
    if (server == 0) {
        dup2(sv[1], 3);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        execl(DIOD, "diod", "-f", "-n", "-N", "-u", "0", "-c", conf, "-L", "stderr", "--rfdno", "3",
              "--wfdno", "3", (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    svc_host_set_fd(sv[0]);
}

static void stop_server(void)
{
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
}

static void path_of(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "/linux%s/%s", dir, name);
}

static void host_of(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        b[i] = (uint8_t)(i * 131u + seed * 7u + (i >> 9));
    }
}

/* Writes n bytes through the client, reads them back through it and from the host's file system. */
static void roundtrip(const char *name, size_t n, unsigned seed)
{
    char p[256], h[256];
    path_of(p, sizeof(p), rw, name);
    host_of(h, sizeof(h), rw, name);
    uint8_t *a = malloc(n + 1), *b = malloc(n + 1);
    fill(a, n, seed);
    int fd = lfs_open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= LFS_FD_FIRST);
    CHECK(lfs_write(fd, a, n) == (ssize_t)n);
    CHECK(lfs_close(fd) == 0);
    FILE *f = fopen(h, "rb");
    CHECK(f != NULL);
    CHECK(fread(b, 1, n + 1, f) == n);
    fclose(f);
    CHECK(memcmp(a, b, n) == 0);
    memset(b, 0, n);
    fd = lfs_open(p, O_RDONLY, 0);
    CHECK(fd >= 0);
    CHECK(lfs_read(fd, b, n + 1) == (ssize_t)n);
    CHECK(lfs_read(fd, b, 1) == 0); /* end of file */
    CHECK(memcmp(a, b, n) == 0);
    struct stat st;
    CHECK(lfs_fstat(fd, &st) == 0 && st.st_size == (off_t)n && S_ISREG(st.st_mode));
    CHECK(lfs_close(fd) == 0);
    free(a);
    free(b);
}

static void test_files(void)
{
    static const size_t sizes[] = {1, 64, 8191, 8192, 8193, 65536, 1u << 20};
    for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        roundtrip("data.bin", sizes[i], i);
    }
    char p[256], q[300], h[256];
    /* pread, pwrite, lseek, append, ftruncate, fsync */
    path_of(p, sizeof(p), rw, "pos.txt");
    int fd = lfs_open(p, O_CREAT | O_RDWR | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(lfs_write(fd, "hello world", 11) == 11);
    CHECK(lfs_pwrite(fd, "W", 1, 6) == 1);
    char buf[32] = {0};
    CHECK(lfs_pread(fd, buf, 5, 6) == 5 && memcmp(buf, "World", 5) == 0);
    CHECK(lfs_lseek(fd, 0, SEEK_CUR) == 11);
    CHECK(lfs_lseek(fd, -5, SEEK_END) == 6);
    CHECK(lfs_read(fd, buf, 5) == 5 && memcmp(buf, "World", 5) == 0);
    CHECK(lfs_lseek(fd, -1, SEEK_SET) == -1 && errno == EINVAL);
    CHECK(lfs_ftruncate(fd, 5) == 0);
    CHECK(lfs_fsync(fd) == 0);
    struct stat st;
    CHECK(lfs_fstat(fd, &st) == 0 && st.st_size == 5);
    CHECK(lfs_close(fd) == 0);
    fd = lfs_open(p, O_WRONLY | O_APPEND, 0);
    CHECK(fd >= 0 && lfs_write(fd, "!", 1) == 1 && lfs_lseek(fd, 0, SEEK_CUR) == 6);
    CHECK(lfs_close(fd) == 0);
    CHECK(lfs_stat(p, &st) == 0 && st.st_size == 6);
    /* directories: mkdir, a listing, rename, unlink, rmdir */
    path_of(p, sizeof(p), rw, "d");
    CHECK(lfs_mkdir(p, 0755) == 0);
    CHECK(lfs_mkdir(p, 0755) == -1 && errno == EEXIST);
    CHECK(lfs_stat(p, &st) == 0 && S_ISDIR(st.st_mode));
    for (unsigned i = 0; i < 40; i++) {
        snprintf(q, sizeof(q), "/linux%s/d/entry-%02u-with-a-long-name-to-fill-the-listing", rw, i);
        fd = lfs_open(q, O_CREAT | O_WRONLY | O_EXCL, 0644);
        CHECK(fd >= 0 && lfs_close(fd) == 0);
    }
    fd = lfs_open(p, O_RDONLY | O_DIRECTORY, 0);
    CHECK(fd >= 0);
    unsigned seen = 0, dots = 0;
    uint8_t dbuf[512]; /* small: the listing takes several Treaddir */
    for (;;) {
        ssize_t n = lfs_readdir(fd, dbuf, sizeof(dbuf));
        CHECK(n >= 0);
        if (n == 0) {
            break;
        }
        size_t pos = 0;
        struct p9_dirent e;
        bool bad;
        uint64_t last = 0;
        while (p9_next_dirent(dbuf, (size_t)n, &pos, &e, &bad)) {
            if (e.name_len <= 2 && e.name[0] == '.') {
                dots++;
            } else {
                CHECK(e.name_len > 9 && memcmp(e.name, "entry-", 6) == 0 && e.type == DT_REG);
                seen++;
            }
            last = e.offset;
        }
        CHECK(!bad);
        CHECK(lfs_seekdir(fd, last) == 0);
    }
    CHECK(seen == 40 && dots == 2);
    CHECK(lfs_close(fd) == 0);
    CHECK(lfs_rmdir(p) == -1 && errno == ENOTEMPTY);
    snprintf(q, sizeof(q), "/linux%s/d/entry-00-with-a-long-name-to-fill-the-listing", rw);
    path_of(h, sizeof(h), rw, "moved");
    CHECK(lfs_rename(q, h) == 0);
    CHECK(lfs_stat(q, &st) == -1 && errno == ENOENT);
    CHECK(lfs_stat(h, &st) == 0 && S_ISREG(st.st_mode));
    CHECK(lfs_unlink(h) == 0 && lfs_unlink(h) == -1 && errno == ENOENT);
    for (unsigned i = 1; i < 40; i++) {
        snprintf(q, sizeof(q), "/linux%s/d/./../d/entry-%02u-with-a-long-name-to-fill-the-listing", rw, i);
        CHECK(lfs_unlink(q) == 0);
    }
    CHECK(lfs_rmdir(p) == 0);
    /* errors as Linux says them, or as the client says them before asking */
    path_of(p, sizeof(p), rw, "missing/x");
    CHECK(lfs_open(p, O_RDONLY, 0) == -1 && errno == ENOENT);
    CHECK(lfs_open(p, O_CREAT | O_WRONLY, 0644) == -1 && errno == ENOENT);
    path_of(p, sizeof(p), rw, "pos.txt");
    CHECK(lfs_open(p, O_CREAT | O_EXCL | O_WRONLY, 0644) == -1 && errno == EEXIST);
    snprintf(q, sizeof(q), "%s/x", p);
    CHECK(lfs_open(q, O_RDONLY, 0) == -1 && errno == ENOTDIR);
    CHECK(lfs_open(p, O_RDONLY | O_DIRECTORY, 0) == -1 && errno == ENOTDIR);
    snprintf(q, sizeof(q), "/linux%s", rw);
    CHECK(lfs_open(q, O_WRONLY, 0) == -1 && errno == EISDIR);
    CHECK(lfs_open("/linux/etc/passwd", O_RDONLY, 0) == -1 && errno == EACCES);
    snprintf(q, sizeof(q), "/linux%s/../../../etc/passwd", rw);
    CHECK(lfs_open(q, O_RDONLY, 0) == -1 && errno == EACCES);
    CHECK(lfs_open("/etc/passwd", O_RDONLY, 0) == -1 && errno == ENOENT);
    CHECK(lfs_open("", O_RDONLY, 0) == -1 && errno == ENOENT);
    path_of(p, sizeof(p), ro, "file");
    CHECK(lfs_open(p, O_WRONLY | O_CREAT, 0644) == -1 && errno == EROFS);
    fd = lfs_open(p, O_RDONLY, 0);
    CHECK(fd >= 0 && lfs_read(fd, buf, sizeof(buf)) == 3 && memcmp(buf, "ro\n", 3) == 0);
    CHECK(lfs_write(fd, "x", 1) == -1 && errno == EBADF);
    CHECK(lfs_close(fd) == 0 && lfs_close(fd) == -1 && errno == EBADF);
    char longname[300];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    path_of(p, sizeof(p), rw, "");
    char lp[600];
    snprintf(lp, sizeof(lp), "%s%s", p, longname);
    CHECK(lfs_open(lp, O_RDONLY, 0) == -1 && errno == ENAMETOOLONG);
}

/* ENOSPC from a full file system: an export that is a 64 KiB tmpfs (made only as root, which may
 * mount; diod does not walk into a file system mounted below an export, so it is one of its own). */
static char full[128];
static bool full_mounted;

static void test_full(void)
{
    if (!full_mounted) {
        printf("svc_diod: ENOSPC not checked (no tmpfs: not root)\n");
        return;
    }
    char p[200];
    path_of(p, sizeof(p), full, "fill.bin");
    int fd = lfs_open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= 0);
    static uint8_t chunk[8192];
    ssize_t r = 0;
    size_t total = 0;
    for (int i = 0; i < 64 && r >= 0; i++) {
        r = lfs_write(fd, chunk, sizeof(chunk));
        total += r > 0 ? (size_t)r : 0;
    }
    CHECK(r == -1 && errno == ENOSPC);
    CHECK(total >= 32768 && total <= 65536);
    int c = lfs_close(fd); /* diod may report the close's ENOSPC: the descriptor is free either way */
    CHECK(c == 0 || (c == -1 && errno == ENOSPC));
    CHECK(lfs_close(fd) == -1 && errno == EBADF);
    CHECK(lfs_unlink(p) == 0);
}

/* Threads at once, each with its own file: the tags keep their replies apart. */
static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    char name[32];
    for (unsigned round = 0; round < 5; round++) {
        snprintf(name, sizeof(name), "t%u.bin", id);
        roundtrip(name, 20000u + id * 997u + round, id * 10 + round);
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t t[12];
    for (unsigned i = 0; i < 12; i++) {
        CHECK(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) == 0);
    }
    for (unsigned i = 0; i < 12; i++) {
        pthread_join(t[i], NULL);
    }
}

/* The server dies with requests in flight, then comes back. */
static volatile int stop_readers;
static void *reader(void *arg)
{
    (void)arg;
    char p[256];
    path_of(p, sizeof(p), rw, "data.bin");
    static uint8_t big[1u << 20];
    int errors = 0;
    while (!stop_readers) {
        int fd = lfs_open(p, O_RDONLY, 0);
        if (fd < 0) {
            CHECK(errno == ENOTCONN || errno == EIO || errno == EBADF);
            errors++;
            usleep(1000);
            continue;
        }
        ssize_t n = lfs_read(fd, big, sizeof(big));
        CHECK(n >= 0 || errno == EIO || errno == EBADF);
        (void)lfs_close(fd);
    }
    return (void *)(intptr_t)errors;
}

static void test_restart(void)
{
    char p[256];
    path_of(p, sizeof(p), rw, "keep.txt");
    int old = lfs_open(p, O_CREAT | O_RDWR, 0644);
    CHECK(old >= 0);
    pthread_t t[4];
    for (unsigned i = 0; i < 4; i++) {
        CHECK(pthread_create(&t[i], NULL, reader, NULL) == 0);
    }
    usleep(100000);
    stop_server();
    usleep(200000);
    char buf[4];
    CHECK(lfs_read(old, buf, 1) == -1 && errno == EBADF);
    CHECK(lfs_open(p, O_RDONLY, 0) == -1 && errno == ENOTCONN);
    start_server();
    usleep(100000);
    stop_readers = 1;
    for (unsigned i = 0; i < 4; i++) {
        void *errors;
        pthread_join(t[i], &errors);
    }
    CHECK(lfs_close(old) == -1 && errno == EBADF);
    int fd = lfs_open(p, O_RDONLY, 0);
    CHECK(fd >= 0 && lfs_close(fd) == 0);
    struct lsvc_stats s;
    lfs_stats(&s);
    CHECK(s.sessions == 2 && s.lost == 1 && s.bad_frames == 0 && s.unknown_tags == 0);
    printf("svc_diod: %llu requests, %llu failed, 2 sessions\n", (unsigned long long)s.requests,
           (unsigned long long)s.errors);
}

int main(void)
{
    if (access(DIOD, X_OK) != 0) {
        fprintf(stderr, "svc_diod: %s not found: `make deps` installs Debian's diod\n", DIOD);
        return 1;
    }
    snprintf(base, sizeof(base), "/tmp/rtmux-svc.XXXXXX");
    CHECK(mkdtemp(base) != NULL);
    snprintf(rw, sizeof(rw), "%s/rw", base);
    snprintf(ro, sizeof(ro), "%s/ro", base);
    CHECK(mkdir(rw, 0755) == 0 && mkdir(ro, 0755) == 0);
    char h[200];
    snprintf(h, sizeof(h), "%s/file", ro);
    FILE *f = fopen(h, "w");
    CHECK(f != NULL && fputs("ro\n", f) >= 0 && fclose(f) == 0);
    snprintf(h, sizeof(h), "%s/diod.conf", base);
    f = fopen(h, "w");
    CHECK(f != NULL);
    snprintf(full, sizeof(full), "%s/full", base);
    CHECK(mkdir(full, 0755) == 0);
    full_mounted = geteuid() == 0 && mount("tmpfs", full, "tmpfs", 0, "size=64k") == 0;
    fprintf(f, "exports = { \"%s\", { path = \"%s\", opts = \"ro\" }, \"%s\" }\n", rw, ro, full);
    fclose(f);
    const char *paths[] = {rw, ro, full};
    const bool ros[] = {false, true, false};
    svc_host_set_exports(paths, ros, 3);
    signal(SIGPIPE, SIG_IGN);
    start_server();
    lfs_init();
    test_files();
    test_full();
    test_threads();
    test_restart();
    stop_server();
    if (full_mounted) {
        CHECK(umount(full) == 0);
    }
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
    CHECK(system(cmd) == 0);
    UNIT_DONE("svc_diod");
}
