/*
 * Clocks and sleeps (<time.h>, <sys/time.h>, <unistd.h>): clock_gettime/getres/settime,
 * clock_getcpuclockid, gettimeofday, nanosleep, clock_nanosleep, sleep.
 *
 * CLOCK_MONOTONIC is the rtos's time since boot (rt_time_now). CLOCK_REALTIME is that plus
 * posix_realtime_offset, which clock_settime sets (the Epoch at boot: the rtos has no RTC), so a step
 * of CLOCK_REALTIME moves no other clock. CLOCK_THREAD_CPUTIME_ID is the calling thread's CPU time
 * (rt_thread_cpu_time: interrupts count for the thread they interrupt), CLOCK_PROCESS_CPUTIME_ID the
 * time since boot the idle thread did not have: the one process is every thread of the application.
 * Every clock's resolution is the counter's tick (rt_time_resolution). No wait here is interrupted
 * (there are no signals), so EINTR never happens and a remaining time is never stored.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "posix.h"
#include "rtos/irq.h"
#include "rtos/thread.h"
#include "rtos/time.h"

#define NS_PER_SEC 1000000000u

bool posix_clock_waitable(clockid_t clk)
{
    return clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC;
}

/* CLOCK_REALTIME in ns: never negative, because clock_settime only sets times >= 0 and the
 * monotonic clock only grows after it. */
static rt_time_t realtime_ns(void)
{
    int64_t t = (int64_t)rt_time_now() + posix_realtime_offset;
    return t > 0 ? (rt_time_t)t : 0;
}

int posix_clock_ns(clockid_t clk, rt_time_t *ns)
{
    switch (clk) {
    case CLOCK_REALTIME:
        *ns = realtime_ns();
        return 0;
    case CLOCK_MONOTONIC:
        *ns = rt_time_now();
        return 0;
    case CLOCK_THREAD_CPUTIME_ID:
        *ns = rt_thread_cpu_time(NULL);
        return 0;
    case CLOCK_PROCESS_CPUTIME_ID: {
        rt_time_t now = rt_time_now(), idle = rt_cpu_idle_time();
        *ns = now > idle ? now - idle : 0;
        return 0;
    }
    default: {
        const rt_thread_t *t = posix_thread_clock(clk);
        if (t == NULL || rt_thread_is_dead(t)) {
            return EINVAL; /* not a clock, or the thread it measured has ended */
        }
        *ns = rt_thread_cpu_time(t);
        return 0;
    }
    }
}

/* The image's bounds (lib/arm64/image.ld.S): every rtos thread object lies inside, statically
 * allocated or on the heap. */
extern const char _start[], _end[];

const rt_thread_t *posix_thread_clock(clockid_t clk)
{
    uintptr_t a = (uintptr_t)clk & ~(uintptr_t)POSIX_THREAD_CLOCK_TAG;
    if ((clk & POSIX_THREAD_CLOCK_TAG) == 0 || a < (uintptr_t)_start || a % 8u != 0 ||
        a > (uintptr_t)_end - sizeof(rt_thread_t)) {
        return NULL;
    }
    return (const rt_thread_t *)a;
}

int clock_gettime(clockid_t clk, struct timespec *tp)
{
    rt_time_t ns = 0;
    int err = posix_clock_ns(clk, &ns);
    if (err == 0 && tp == NULL) {
        err = EFAULT;
    }
    if (err != 0) {
        errno = err;
        return -1;
    }
    *tp = posix_ns_timespec(ns);
    return 0;
}

int clock_getres(clockid_t clk, struct timespec *res)
{
    rt_time_t ns;
    if (posix_clock_ns(clk, &ns) != 0) {
        errno = EINVAL;
        return -1;
    }
    if (res != NULL) { /* NULL is allowed: the caller only checks the clock */
        *res = posix_ns_timespec(rt_time_resolution());
    }
    return 0;
}

int clock_settime(clockid_t clk, const struct timespec *tp)
{
    /* Only CLOCK_REALTIME is settable: the monotonic clock by definition, the CPU-time clocks because
     * they count what the kernel measured. A time past 2262 (2^63 ns) does not fit the offset. */
    if (clk != CLOCK_REALTIME || !posix_timespec_valid(tp) ||
        (uint64_t)tp->tv_sec >= INT64_MAX / NS_PER_SEC) {
        errno = EINVAL;
        return -1;
    }
    int64_t want = (int64_t)posix_timespec_ns(tp);
    /* One aligned 64-bit store: a reader on this core sees the old or the new offset, whole. Waits
     * computed before keep their monotonic deadlines (docs/posix.md). */
    posix_realtime_offset = want - (int64_t)rt_time_now();
    return 0;
}

int clock_getcpuclockid(pid_t pid, clockid_t *clock_id)
{
    if (pid != 0 && pid != getpid()) {
        return ESRCH; /* one process */
    }
    if (clock_id == NULL) {
        return EINVAL;
    }
    *clock_id = CLOCK_PROCESS_CPUTIME_ID;
    return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    (void)tz; /* obsolescent; no time zone is kept */
    if (tv != NULL) {
        rt_time_t ns = realtime_ns();
        tv->tv_sec = (time_t)(ns / NS_PER_SEC);
        tv->tv_usec = (suseconds_t)(ns % NS_PER_SEC / 1000u);
    }
    return 0;
}

/*
 * A wait of the calling thread until `deadline` (CLOCK_MONOTONIC, ns); 0 or an error number. The sleeps
 * are cancellation points: a pending request is acted on at entry (clock_nanosleep) and after each
 * sleep, which a request does not shorten (rt_sleep_until keeps the release point exact; posix.md).
 */
static int sleep_until_mono(rt_time_t deadline)
{
    int rc = rt_sleep_until(deadline);
    posix_testcancel();
    return rc == RT_OK ? 0 : posix_errno(rc);
}

int clock_nanosleep(clockid_t clk, int flags, const struct timespec *rqtp, struct timespec *rmtp)
{
    (void)rmtp; /* only for EINTR, which never happens */
    if (clk == CLOCK_PROCESS_CPUTIME_ID) {
        return ENOTSUP; /* a CPU-time clock: the spec's ENOTSUP */
    }
    /* A relative interval must not be negative; an absolute time may be (before the Epoch: passed). */
    bool abs = (flags & TIMER_ABSTIME) != 0;
    if (!posix_clock_waitable(clk) || !(abs ? posix_abstime_valid(rqtp) : posix_timespec_valid(rqtp))) {
        return EINVAL; /* among them the calling thread's CPU-time clock, as the spec says */
    }
    if (rt_in_irq()) {
        return EPERM;
    }
    posix_testcancel();
    rt_time_t t = abs ? posix_abstime_ns(rqtp) : posix_timespec_ns(rqtp);
    if (!abs) {
        /* Relative: the same length on either clock, a step of CLOCK_REALTIME changes nothing. */
        rt_time_t now = rt_time_now();
        return sleep_until_mono(t < RT_FOREVER - 1u - now ? now + t : RT_FOREVER - 1u);
    }
    if (clk == CLOCK_MONOTONIC) {
        /* The release point itself, not a duration from now: a periodic loop adding its period to it
         * does not drift, however late each wake-up is. */
        return sleep_until_mono(t);
    }
    /* CLOCK_REALTIME, absolute: wait for the monotonic time the realtime one reaches t at. If the
     * clock was set back meanwhile, wait again; a step forward is seen only at the wake-up it does not
     * bring earlier (docs/posix.md). */
    for (;;) {
        rt_time_t now = realtime_ns();
        if (now >= t) {
            return 0;
        }
        int err = sleep_until_mono(rt_time_now() + (t - now));
        if (err != 0) {
            return err;
        }
    }
}

int nanosleep(const struct timespec *rqtp, struct timespec *rmtp)
{
    int err = clock_nanosleep(CLOCK_MONOTONIC, 0, rqtp, rmtp);
    if (err != 0) {
        errno = err;
        return -1;
    }
    return 0;
}

unsigned sleep(unsigned seconds)
{
    struct timespec ts = {.tv_sec = (time_t)seconds, .tv_nsec = 0};
    (void)clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
    return 0; /* never woken early: no signals */
}
