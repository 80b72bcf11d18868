/*
 * Linux reboots under the rtos's file calls (tests/system/test_linux_services.py): threads read and
 * write Linux's files in a loop; Linux's script reboots Linux (`reboot -f`) once it sees `done`. Every
 * call in flight returns (EIO), descriptors of the old session give EBADF, calls while Linux boots give
 * ENOTCONN, and once Linux's new server is up the same threads work again, on an empty /srv/rtos (its
 * initramfs is in RAM): `rebooted-ok` there tells the second boot's script to end.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "rtmux/linux.h"

#define BASE    "/linux/srv/rtos"
#define THREADS 3

static atomic_int stop, ok_calls, eio, ebadf, enotconn, other;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void count(int e)
{
    atomic_fetch_add(e == EIO ? &eio : e == EBADF ? &ebadf : e == ENOTCONN ? &enotconn : &other, 1);
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    char path[64];
    snprintf(path, sizeof(path), BASE "/w%u.bin", id);
    static unsigned char buf[THREADS][4096];
    int fd = -1;
    while (!atomic_load(&stop)) {
        if (fd < 0) {
            fd = open(path, O_CREAT | O_RDWR, 0644);
            if (fd < 0) {
                count(errno);
                sleep_ms(20);
                continue;
            }
        }
        ssize_t n =
            (id % 2) ? pwrite(fd, buf[id], sizeof(buf[id]), 0) : pread(fd, buf[id], sizeof(buf[id]), 0);
        if (n < 0) {
            count(errno);
            (void)close(fd); /* a descriptor of the old session: EBADF, and it is freed */
            fd = -1;
        } else {
            atomic_fetch_add(&ok_calls, 1);
        }
    }
    if (fd >= 0) {
        (void)close(fd);
    }
    return NULL;
}

int main(void)
{
    struct stat st;
    for (int i = 0; stat(BASE "/ready", &st) != 0; i++) {
        if (i == 1200) {
            printf("REBOOT| error: no ready in 120 s\n");
            return 1;
        }
        sleep_ms(100);
    }
    pthread_t t[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        CHECK_EQ(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i), 0);
    }
    sleep_ms(200);
    struct rtmux_linux_stats s0, s;
    CHECK_EQ(rtmux_linux_stats(&s0), 0);
    int fd = open(BASE "/done", O_CREAT | O_WRONLY, 0644); /* the script reboots Linux on it */
    CHECK(fd >= 0 && close(fd) == 0);
    int after = 0;
    for (int i = 0; i < 1800; i++) { /* Linux's reboot and boot: up to 180 s of guest time */
        sleep_ms(100);
        CHECK_EQ(rtmux_linux_stats(&s), 0);
        if (s.files.lost > s0.files.lost && s.files.sessions > s0.files.sessions) {
            int before = atomic_load(&ok_calls);
            sleep_ms(500);
            after = atomic_load(&ok_calls) - before;
            break;
        }
    }
    atomic_store(&stop, 1);
    for (unsigned i = 0; i < THREADS; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    }
    printf("REBOOT| lost %llu sessions %llu; EIO %d EBADF %d ENOTCONN %d other %d; calls after %d\n",
           (unsigned long long)(s.files.lost - s0.files.lost),
           (unsigned long long)(s.files.sessions - s0.files.sessions), atomic_load(&eio), atomic_load(&ebadf),
           atomic_load(&enotconn), atomic_load(&other), after);
    CHECK(s.files.lost > s0.files.lost);
    CHECK(after > 0);
    CHECK_EQ(atomic_load(&other), 0);
    fd = open(BASE "/rebooted-ok", O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0 && close(fd) == 0);
    POSIX_TEST_END("linux reboot");
}
