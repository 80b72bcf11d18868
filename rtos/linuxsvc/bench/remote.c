/*
 * Linux's files from the rtos, measured (issue 25, `make bench`): one boot of the whole system, the
 * rtos partition running this application while Linux's script (tools/rtmux/bench) prepares the files,
 * waits, and times a local dd on the same file system. It waits (at most 120 s) for Linux's
 * /srv/rtos/ready, then prints:
 *
 *   LSB| pread64 samples N min_ns A avg_ns B p99_ns C max_ns D
 *        a 64-byte pread of Linux's /srv/rtos/bench.bin, from the call to its return (one 9P round trip),
 *        N = LSB_SAMPLES after 100 not counted
 *   LSB| write bytes N ns T
 *        N bytes written in 8 KiB writes then fsync'd to /srv/rtos/bench-w.bin (open and close not timed)
 *   LSB| hist KIND US COUNT                                    (one per non-empty 1-us cell, in order)
 *   LSB| latency KIND samples N min_ns A avg_ns B p99_ns C p999_ns D max_ns M overruns O reads R
 *        a 1 kHz SCHED_FIFO thread's lateness after its release point (clock_nanosleep, TIMER_ABSTIME),
 *        N = LSB_PERIODS periods: alone, Linux idle (KIND alone, R = 0); alone while Linux keeps its CPU
 *        busy (KIND linux_busy, R = 0: from `busy` in /srv/rtos, which Linux's script looks for, until
 *        its removal, Linux reads the same file locally in a loop and the V-Bus's counters' port); and
 *        while a less urgent thread loops on 8 KiB remote preads of bench-w.bin (KIND remote_io; R: its
 *        reads from its start, 50 ms before the run, to the run's end); O: the periods that woke a
 *        whole period late or more. linux_busy is remote_io's baseline without the rtos's remote I/O:
 *        in QEMU's icount mode a busy vCPU beside the rtos's delays its timer interrupt by itself.
 *   LSB| done
 * then `done` in /srv/rtos (Linux's script goes on) and exit(0). A failure prints `LSB| error ...` and
 * exits with status 1. Averages are rounded down to the nanosecond; percentiles are nearest-rank, exact
 * (every sample is kept). LSB_SAMPLES and LSB_PERIODS are compile-time (-DLSB_SAMPLES=N; `make
 * build/linuxsvc/remote-N.img` sets both to N).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rtmux/main.h>

RTMUX_MAIN_THREAD(100, 16 * 1024);

#ifndef LSB_SAMPLES
#define LSB_SAMPLES 2000
#endif
#ifndef LSB_PERIODS
#define LSB_PERIODS 2000
#endif

#define BASE       "/linux/srv/rtos"
#define WARMUP     100u
#define SAMPLES    ((unsigned)(LSB_SAMPLES))
#define PERIODS    ((unsigned)(LSB_PERIODS))
#define WRITE_SIZE (4u << 20)
#define CHUNK      8192u
#define PERIOD_NS  1000000L
#define HIGH_PRIO  250
#define IO_PRIO    10

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t samples[SAMPLES > PERIODS ? SAMPLES : PERIODS];

/* The nearest-rank quantile permille/1000 of the first n samples, sorted: the one of rank ceil(p * n). */
static uint64_t rank(unsigned n, unsigned permille)
{
    return samples[(n * permille + 999u) / 1000u - 1u];
}

static int pread64_rtt(void)
{
    int fd = open(BASE "/bench.bin", O_RDONLY);
    if (fd < 0) {
        printf("LSB| error open bench.bin: errno %d\n", errno);
        return 1;
    }
    char buf[64];
    for (unsigned i = 0; i < WARMUP + SAMPLES; i++) {
        uint64_t t0 = now_ns();
        ssize_t n = pread(fd, buf, sizeof(buf), (off_t)((i * 64u) % 4096u));
        uint64_t t1 = now_ns();
        if (n != (ssize_t)sizeof(buf)) {
            printf("LSB| error pread: %ld errno %d\n", (long)n, errno);
            close(fd);
            return 1;
        }
        if (i >= WARMUP) {
            samples[i - WARMUP] = t1 - t0;
        }
    }
    close(fd);
    uint64_t sum = 0;
    for (unsigned i = 0; i < SAMPLES; i++) {
        sum += samples[i];
    }
    qsort(samples, SAMPLES, sizeof(samples[0]), cmp_u64);
    printf("LSB| pread64 samples %u min_ns %llu avg_ns %llu p99_ns %llu max_ns %llu\n", SAMPLES,
           (unsigned long long)samples[0], (unsigned long long)(sum / SAMPLES),
           (unsigned long long)rank(SAMPLES, 990u), (unsigned long long)samples[SAMPLES - 1]);
    return 0;
}

static int write_throughput(void)
{
    static unsigned char chunk[CHUNK];
    memset(chunk, 0x5a, sizeof(chunk));
    int fd = open(BASE "/bench-w.bin", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) {
        printf("LSB| error open bench-w.bin: errno %d\n", errno);
        return 1;
    }
    uint64_t t0 = now_ns();
    for (unsigned done = 0; done < WRITE_SIZE; done += CHUNK) {
        if (write(fd, chunk, CHUNK) != (ssize_t)CHUNK) {
            printf("LSB| error write: errno %d\n", errno);
            close(fd);
            return 1;
        }
    }
    int r = fsync(fd);
    uint64_t t1 = now_ns();
    close(fd);
    if (r != 0) {
        printf("LSB| error fsync: errno %d\n", errno);
        return 1;
    }
    printf("LSB| write bytes %u ns %llu\n", WRITE_SIZE, (unsigned long long)(t1 - t0));
    return 0;
}

static atomic_int io_stop;
static atomic_long io_reads;

static void *remote_io(void *arg)
{
    (void)arg;
    static unsigned char buf[CHUNK];
    int fd = open(BASE "/bench-w.bin", O_RDONLY);
    for (off_t off = 0; fd >= 0 && !atomic_load(&io_stop); off = (off + CHUNK) % WRITE_SIZE) {
        if (pread(fd, buf, CHUNK, off) > 0) {
            atomic_fetch_add(&io_reads, 1);
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    return NULL;
}

static void *periodic(void *arg)
{
    (void)arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (unsigned i = 0; i < PERIODS; i++) {
        next.tv_nsec += PERIOD_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        samples[i] = now_ns() - ((uint64_t)next.tv_sec * 1000000000u + (uint64_t)next.tv_nsec);
    }
    return NULL;
}

static pthread_t start(void *(*fn)(void *), void *arg, int prio)
{
    pthread_attr_t a;
    struct sched_param p = {.sched_priority = prio};
    pthread_t t;
    pthread_attr_init(&a);
    pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
    pthread_attr_setschedpolicy(&a, SCHED_FIFO);
    pthread_attr_setschedparam(&a, &p);
    if (pthread_create(&t, &a, fn, arg) != 0) {
        printf("LSB| error pthread_create\n");
        exit(1);
    }
    pthread_attr_destroy(&a);
    return t;
}

static void latency(const char *kind, bool with_io)
{
    pthread_t io = NULL;
    atomic_store(&io_stop, 0);
    atomic_store(&io_reads, 0);
    if (with_io) {
        io = start(remote_io, NULL, IO_PRIO);
        sleep_ms(50); /* its reads under way */
    }
    pthread_join(start(periodic, NULL, HIGH_PRIO), NULL);
    long reads = atomic_load(&io_reads);
    atomic_store(&io_stop, 1);
    if (with_io) {
        pthread_join(io, NULL);
    }
    uint64_t sum = 0;
    unsigned overruns = 0;
    for (unsigned i = 0; i < PERIODS; i++) {
        sum += samples[i];
        overruns += samples[i] >= (uint64_t)PERIOD_NS;
    }
    qsort(samples, PERIODS, sizeof(samples[0]), cmp_u64);
    for (unsigned i = 0; i < PERIODS;) { /* the 1-us cells, for the benchmark's histogram figure */
        uint64_t us = samples[i] / 1000u;
        unsigned n = 0;
        for (; i < PERIODS && samples[i] / 1000u == us; i++) {
            n++;
        }
        printf("LSB| hist %s %llu %u\n", kind, (unsigned long long)us, n);
    }
    printf("LSB| latency %s samples %u min_ns %llu avg_ns %llu p99_ns %llu p999_ns %llu max_ns %llu "
           "overruns %u reads %ld\n",
           kind, PERIODS, (unsigned long long)samples[0], (unsigned long long)(sum / PERIODS),
           (unsigned long long)rank(PERIODS, 990u), (unsigned long long)rank(PERIODS, 999u),
           (unsigned long long)samples[PERIODS - 1], overruns, reads);
}

/* Creates (on) or removes BASE/busy, then gives Linux's script, which looks for it every 100 ms and
 * between two rounds of its load, 300 ms to start or stop. */
static int linux_busy(bool on)
{
    int r = 0;
    if (on) {
        int fd = open(BASE "/busy", O_CREAT | O_WRONLY, 0644);
        r = fd < 0 ? -1 : close(fd);
    } else {
        r = unlink(BASE "/busy");
    }
    if (r != 0) {
        printf("LSB| error %s busy: errno %d\n", on ? "create" : "remove", errno);
        return 1;
    }
    sleep_ms(300);
    return 0;
}

int main(void)
{
    struct stat st;
    for (int i = 0; stat(BASE "/ready", &st) != 0; i++) { /* Linux boots after the rtos */
        if (i == 1200) {
            printf("LSB| error: Linux's %s/ready did not come in 120 s (errno %d)\n", BASE, errno);
            return 1;
        }
        sleep_ms(100);
    }
    if (pread64_rtt() != 0 || write_throughput() != 0) {
        return 1;
    }
    latency("alone", false);
    if (linux_busy(true) != 0) {
        return 1;
    }
    latency("linux_busy", false);
    if (linux_busy(false) != 0) {
        return 1;
    }
    latency("remote_io", true);
    printf("LSB| done\n");
    int fd = open(BASE "/done", O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) {
        close(fd);
    }
    return 0;
}
