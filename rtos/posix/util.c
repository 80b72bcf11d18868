/*
 * Conversions the POSIX layer shares: errno values, timespecs, absolute times to rtos timeouts.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "posix.h"
#include "rtos/irq.h"
#include "rtos/time.h"

int64_t posix_realtime_offset;

int posix_errno(int rt_status)
{
    switch (rt_status) {
    case RT_OK:
        return 0;
    case RT_ETIMEDOUT:
        return ETIMEDOUT;
    case RT_EWOULDBLOCK:
        return EAGAIN;
    case RT_EPERM:
        return EPERM;
    case RT_EDEADLK:
        return EDEADLK;
    case RT_EOVERFLOW:
        return EOVERFLOW;
    case RT_EBUSY:
        return EBUSY;
    case RT_ENOENT:
        return ENOENT;
    case RT_ENOTCONN:
        return ENOTCONN;
    default:
        return EINVAL;
    }
}

bool posix_timespec_valid(const struct timespec *ts)
{
    return ts != NULL && ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

bool posix_abstime_valid(const struct timespec *ts)
{
    return ts != NULL && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

rt_time_t posix_abstime_ns(const struct timespec *ts)
{
    return ts->tv_sec < 0 ? 0 : posix_timespec_ns(ts);
}

rt_time_t posix_timespec_ns(const struct timespec *ts)
{
    const rt_time_t limit = RT_FOREVER - 1u;
    rt_time_t sec = (rt_time_t)ts->tv_sec;
    if (sec > (limit - (rt_time_t)ts->tv_nsec) / 1000000000u) {
        return limit;
    }
    return sec * 1000000000u + (rt_time_t)ts->tv_nsec;
}

struct timespec posix_ns_timespec(rt_time_t ns)
{
    return (struct timespec){.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
}

int posix_abs_timeout(clockid_t clk, const struct timespec *abs, rt_time_t *timeout)
{
    if (!posix_abstime_valid(abs) || (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC)) {
        return EINVAL;
    }
    rt_time_t deadline = posix_abstime_ns(abs);
    if (clk == CLOCK_REALTIME) {
        /* monotonic = realtime - offset, clamped to the range of the rtos's clock */
        int64_t off = posix_realtime_offset;
        if (off > 0) {
            deadline = deadline > (rt_time_t)off ? deadline - (rt_time_t)off : 0;
        } else if (off < 0) {
            rt_time_t add = (rt_time_t)0 - (rt_time_t)off;
            deadline = deadline < RT_FOREVER - 1u - add ? deadline + add : RT_FOREVER - 1u;
        }
    }
    rt_time_t now = rt_time_now();
    *timeout = deadline > now ? deadline - now : RT_NO_WAIT;
    return 0;
}

int posix_name_check(const char *name)
{
    if (name == NULL || name[0] != '/' || name[1] == '\0') {
        return EINVAL;
    }
    size_t n = strnlen(name + 1, NAME_MAX + 1u);
    if (n > NAME_MAX) {
        return ENAMETOOLONG;
    }
    return memchr(name + 1, '/', n) != NULL ? EINVAL : 0;
}

int posix_unlink_check(const char *name)
{
    int err = posix_name_check(name);
    if (err == EINVAL) {
        return ENOENT;
    }
    return err == 0 && rt_in_irq() ? EPERM : err;
}
