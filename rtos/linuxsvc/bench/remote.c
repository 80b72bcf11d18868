/*
 * Linux's files from the rtos, measured (issue 25, `make bench`): one boot of the whole system, the
 * rtos partition running this application while Linux's script (tools/rtmux/bench) prepares the files,
 * waits, and times a local dd on the same file system.
 *
 *   LSB| pread64 samples N min_ns A avg_ns B p99_ns C max_ns D
 *        a 64-byte pread of Linux's /srv/rtos/bench.bin, from the call to its return (one 9P round trip)
 *   LSB| write bytes N ns T
 *        N bytes written in 8 KiB writes then fsync'd to /srv/rtos/bench-w.bin
 *   LSB| latency KIND samples N avg_ns A max_ns M [reads R]
 *        a 1 kHz SCHED_FIFO thread's lateness after its release point (clock_nanosleep, TIMER_ABSTIME),
 *        alone (KIND alone) and while a less urgent thread loops on 8 KiB remote preads (remote_io)
 *   LSB| done
 * then `done` in /srv/rtos (Linux's script goes on) and exit(0).
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

#define BASE       "/linux/srv/rtos"
#define WARMUP     100u
#define SAMPLES    2000u
#define WRITE_SIZE (4u << 20)
#define CHUNK      8192u
#define PERIODS    2000u
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

static uint64_t samples[SAMPLES];

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
           (unsigned long long)samples[(SAMPLES * 99u + 99u) / 100u - 1u],
           (unsigned long long)samples[SAMPLES - 1]);
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

struct lateness {
    uint64_t sum, max;
};

static void *periodic(void *arg)
{
    struct lateness *l = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (unsigned i = 0; i < PERIODS; i++) {
        next.tv_nsec += PERIOD_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        uint64_t late = now_ns() - ((uint64_t)next.tv_sec * 1000000000u + (uint64_t)next.tv_nsec);
        l->sum += late;
        l->max = late > l->max ? late : l->max;
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
    struct lateness l = {0};
    pthread_t io = NULL;
    atomic_store(&io_stop, 0);
    atomic_store(&io_reads, 0);
    if (with_io) {
        io = start(remote_io, NULL, IO_PRIO);
        sleep_ms(50); /* its reads under way */
    }
    pthread_join(start(periodic, &l, HIGH_PRIO), NULL);
    atomic_store(&io_stop, 1);
    if (with_io) {
        pthread_join(io, NULL);
        printf("LSB| latency %s samples %u avg_ns %llu max_ns %llu reads %ld\n", kind, PERIODS,
               (unsigned long long)(l.sum / PERIODS), (unsigned long long)l.max, atomic_load(&io_reads));
    } else {
        printf("LSB| latency %s samples %u avg_ns %llu max_ns %llu\n", kind, PERIODS,
               (unsigned long long)(l.sum / PERIODS), (unsigned long long)l.max);
    }
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
    latency("remote_io", true);
    printf("LSB| done\n");
    int fd = open(BASE "/done", O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) {
        close(fd);
    }
    return 0;
}
