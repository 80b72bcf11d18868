/*
 * Clocks and sleeps: clock_gettime/getres/settime on every clock, gettimeofday and time, nanosleep and
 * clock_nanosleep (relative, absolute, on both clocks, after a step of CLOCK_REALTIME), CPU-time clocks
 * of a busy and a blocked thread, and every EINVAL path.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "rtos/sync.h"
#include "rtos/thread.h"

#define MS 1000000LL

static long long ns_of(clockid_t clk)
{
    struct timespec ts;
    if (clock_gettime(clk, &ts) != 0) {
        return -1;
    }
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void spin_ns(long long d)
{
    long long end = ns_of(CLOCK_MONOTONIC) + d;
    while (ns_of(CLOCK_MONOTONIC) < end) {
    }
}

/* A thread that blocks on a semaphore while the main thread spins, then reports its own CPU time. */
static rt_sem_t go;
static volatile long long blocked_cpu0, blocked_cpu1, blocked_wall;

static void blocked_entry(void *arg)
{
    (void)arg;
    blocked_cpu0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
    long long w0 = ns_of(CLOCK_MONOTONIC);
    (void)rt_sem_take(&go, RT_FOREVER);
    blocked_wall = ns_of(CLOCK_MONOTONIC) - w0;
    blocked_cpu1 = ns_of(CLOCK_THREAD_CPUTIME_ID);
}

static void test_gettime_getres(void)
{
    struct timespec a, b, res;
    CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &a), 0);
    spin_ns(10000);
    CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &b), 0);
    CHECK(b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec + 10000));
    CHECK(a.tv_nsec >= 0 && a.tv_nsec < 1000000000L);
    static const clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID,
                                       CLOCK_THREAD_CPUTIME_ID};
    for (unsigned i = 0; i < 4; i++) {
        res.tv_sec = -1;
        CHECK_EQ(clock_getres(clocks[i], &res), 0);
        CHECK(res.tv_sec == 0 && res.tv_nsec > 0 && res.tv_nsec <= 1000);
        CHECK_EQ(clock_getres(clocks[i], NULL), 0);
        CHECK(ns_of(clocks[i]) >= 0);
    }
    errno = 0;
    CHECK_EQ(clock_getres((clockid_t)99, &res), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(clock_gettime((clockid_t)99, &a), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, NULL), -1);
    CHECK_EQ(errno, EFAULT);
    /* clock(): XSI's CLOCKS_PER_SEC, one million, and as many ticks as time spent. */
    CHECK_EQ(CLOCKS_PER_SEC, 1000000);
    clock_t c0 = clock();
    spin_ns(2 * MS);
    clock_t c1 = clock();
    CHECK(c1 - c0 >= 2000 && c1 - c0 < 2100);
    clockid_t cid = 0;
    CHECK_EQ(clock_getcpuclockid(0, &cid), 0);
    CHECK_EQ(cid, CLOCK_PROCESS_CPUTIME_ID);
    CHECK_EQ(clock_getcpuclockid(getpid(), &cid), 0);
    CHECK_EQ(clock_getcpuclockid(42, &cid), ESRCH);
}

static void test_settime(void)
{
    long long mono0 = ns_of(CLOCK_MONOTONIC);
    struct timespec set = {.tv_sec = 1700000000, .tv_nsec = 500000000};
    CHECK_EQ(clock_settime(CLOCK_REALTIME, &set), 0);
    long long rt = ns_of(CLOCK_REALTIME), mono1 = ns_of(CLOCK_MONOTONIC);
    CHECK(rt >= 1700000000500000000LL && rt < 1700000000500000000LL + MS);
    /* Monotonic did not jump with the step. */
    CHECK(mono1 >= mono0 && mono1 - mono0 < MS);
    struct timeval tv;
    CHECK_EQ(gettimeofday(&tv, NULL), 0);
    CHECK(tv.tv_sec == 1700000000 && tv.tv_usec >= 500000 && tv.tv_usec < 501000);
    CHECK(time(NULL) == 1700000000);
    /* Back in time too, as far as the Epoch. */
    set = (struct timespec){.tv_sec = 0, .tv_nsec = 0};
    CHECK_EQ(clock_settime(CLOCK_REALTIME, &set), 0);
    CHECK(ns_of(CLOCK_REALTIME) < MS);
    CHECK(ns_of(CLOCK_MONOTONIC) >= mono1);
    static const struct timespec bad[] = {{0, -1}, {0, 1000000000L}, {-1, 0}};
    for (unsigned i = 0; i < 3; i++) {
        errno = 0;
        CHECK_EQ(clock_settime(CLOCK_REALTIME, &bad[i]), -1);
        CHECK_EQ(errno, EINVAL);
    }
    errno = 0;
    CHECK_EQ(clock_settime(CLOCK_REALTIME, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    set = (struct timespec){.tv_sec = 10, .tv_nsec = 0};
    static const clockid_t fixed[] = {CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, CLOCK_PROCESS_CPUTIME_ID,
                                      (clockid_t)99};
    for (unsigned i = 0; i < 4; i++) {
        errno = 0;
        CHECK_EQ(clock_settime(fixed[i], &set), -1);
        CHECK_EQ(errno, EINVAL);
    }
    CHECK(ns_of(CLOCK_MONOTONIC) < 10LL * 1000 * MS); /* the refused settime changed nothing */
}

static void test_sleeps(void)
{
    /* Relative nanosleep: at least the time asked, at most a little more (icount: the wake-up's
     * instructions; 1 ms leaves room for a run without icount). */
    long long t0 = ns_of(CLOCK_MONOTONIC);
    struct timespec rq = {.tv_sec = 0, .tv_nsec = 2500000};
    struct timespec rm = {.tv_sec = 7, .tv_nsec = 7};
    CHECK_EQ(nanosleep(&rq, &rm), 0);
    long long el = ns_of(CLOCK_MONOTONIC) - t0;
    CHECK(el >= 2500000 && el < 2500000 + MS);
    CHECK(rm.tv_sec == 7 && rm.tv_nsec == 7); /* not woken early: rmtp untouched */
    static const struct timespec bad[] = {{0, -1}, {0, 1000000000L}, {-1, 0}};
    for (unsigned i = 0; i < 3; i++) {
        errno = 0;
        CHECK_EQ(nanosleep(&bad[i], NULL), -1);
        CHECK_EQ(errno, EINVAL);
        CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad[i], NULL), EINVAL);
        /* Absolute, a negative tv_sec is a time before the Epoch: passed, not EINVAL. */
        CHECK_EQ(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &bad[i], NULL), i < 2 ? EINVAL : 0);
        CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &bad[i], NULL), i < 2 ? EINVAL : 0);
    }
    errno = 0;
    CHECK_EQ(nanosleep(NULL, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &rq, NULL), EINVAL);
    CHECK_EQ(clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, 0, &rq, NULL), ENOTSUP);
    CHECK_EQ(clock_nanosleep((clockid_t)99, 0, &rq, NULL), EINVAL);
    rq.tv_nsec = 0;
    CHECK_EQ(nanosleep(&rq, NULL), 0); /* zero: returns at once */
    CHECK_EQ(sleep(0), 0);

    /* Absolute on CLOCK_MONOTONIC: at or after the deadline, within 50 us (icount: instructions) */
    struct timespec now;
    CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &now), 0);
    long long dl = (long long)now.tv_sec * 1000000000LL + now.tv_nsec + 3 * MS + 123;
    struct timespec abs = {.tv_sec = (time_t)(dl / 1000000000LL), .tv_nsec = (long)(dl % 1000000000LL)};
    CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL), 0);
    long long woke = ns_of(CLOCK_MONOTONIC);
    CHECK(woke >= dl && woke < dl + 50000);
    /* A deadline in the past returns at once. */
    t0 = ns_of(CLOCK_MONOTONIC);
    CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL), 0);
    CHECK(ns_of(CLOCK_MONOTONIC) - t0 < 50000);

    /* Absolute on CLOCK_REALTIME, after a step of it: the deadline is on the new time scale. */
    struct timespec set = {.tv_sec = 5000, .tv_nsec = 0};
    CHECK_EQ(clock_settime(CLOCK_REALTIME, &set), 0);
    abs = (struct timespec){.tv_sec = 5000, .tv_nsec = 4000000};
    t0 = ns_of(CLOCK_MONOTONIC);
    CHECK_EQ(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &abs, NULL), 0);
    el = ns_of(CLOCK_MONOTONIC) - t0;
    CHECK(ns_of(CLOCK_REALTIME) >= 5000LL * 1000000000LL + 4 * MS);
    CHECK(el >= 3 * MS && el < 4 * MS + 50000);
    /* Relative on CLOCK_REALTIME: a duration. */
    rq = (struct timespec){.tv_sec = 0, .tv_nsec = 1500000};
    t0 = ns_of(CLOCK_MONOTONIC);
    CHECK_EQ(clock_nanosleep(CLOCK_REALTIME, 0, &rq, NULL), 0);
    el = ns_of(CLOCK_MONOTONIC) - t0;
    CHECK(el >= 1500000 && el < 1500000 + 50000);
}

static void test_cpu_time(void)
{
    CHECK_EQ(rt_sem_init(&go, 0, 1), RT_OK);
    static rt_thread_t helper;
    size_t size = 16384;
    void *stack = aligned_alloc(16, size);
    CHECK(stack != NULL);
    /* More urgent than main: it runs at once, reads its clock and blocks. */
    CHECK_EQ(rt_thread_create(&helper, "blocked", blocked_entry, NULL, stack, size, 200), RT_OK);
    /* The wall-clock interval encloses the CPU-time ones. */
    long long w0 = ns_of(CLOCK_MONOTONIC);
    long long proc0 = ns_of(CLOCK_PROCESS_CPUTIME_ID), cpu0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
    spin_ns(20 * MS);
    long long busy = ns_of(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    long long proc = ns_of(CLOCK_PROCESS_CPUTIME_ID) - proc0;
    long long wall = ns_of(CLOCK_MONOTONIC) - w0;
    CHECK(busy >= 19 * MS && busy <= wall);
    CHECK(proc >= busy && proc <= wall);
    CHECK_EQ(rt_sem_give(&go), RT_OK); /* the helper ends */
    CHECK_EQ(rt_thread_join(&helper, RT_SEC(1)), RT_OK);
    CHECK(blocked_wall >= 20 * MS);
    CHECK(blocked_cpu1 - blocked_cpu0 < MS / 10);
    free(stack);
    /* A sleeping main: its CPU time and the process's hardly move (the idle thread runs). */
    cpu0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
    proc0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
    struct timespec rq = {.tv_sec = 0, .tv_nsec = 10 * MS};
    CHECK_EQ(nanosleep(&rq, NULL), 0);
    CHECK(ns_of(CLOCK_THREAD_CPUTIME_ID) - cpu0 < MS / 10);
    CHECK(ns_of(CLOCK_PROCESS_CPUTIME_ID) - proc0 < MS / 10);
}

int main(void)
{
    test_gettime_getres();
    test_settime();
    test_sleeps();
    test_cpu_time();
    POSIX_TEST_END("clock");
}
