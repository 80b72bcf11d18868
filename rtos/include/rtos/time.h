/*
 * Time, sleeps and periodic threads, on the ARM generic timer. The kernel is tickless: one hardware
 * timer is programmed for the earliest deadline.
 */
#ifndef RTOS_TIME_H
#define RTOS_TIME_H

#include <stdint.h>

#include "rtos/types.h"

/* Nanoseconds since boot. */
rt_time_t rt_time_now(void);

/* Resolution of the clock in ns (one counter tick; 16 ns on QEMU virt). */
rt_time_t rt_time_resolution(void);

/* Relative and absolute sleeps. rt_sleep_until() returns at or after `deadline`, never before.
 * RT_FOREVER (or any time the counter cannot reach) sleeps for good: the call does not return. */
int rt_sleep(rt_time_t duration);
int rt_sleep_until(rt_time_t deadline);

/*
 * Makes the caller periodic: first release at `start` (absolute ns; 0 = now + period), then every
 * `period` ns. Release points are absolute, so they do not drift. RT_EINVAL for a period of 0 or one
 * the counter cannot count (it saturates, see below).
 */
int rt_periodic_start(rt_time_t start, rt_time_t period);

/*
 * Waits for the next release point. A point is missed when it lies before the current counter tick;
 * one on that tick is on time. If points were missed, returns at once with RT_EOVERRUN, *overruns = the
 * number missed, and as current release the latest point at or before now; otherwise waits for the
 * point and returns RT_OK with *overruns = 0. *release (optional) receives the current release point
 * (ns).
 */
int rt_periodic_wait(uint64_t *overruns, rt_time_t *release);

/*
 * Conversions between ns and counter ticks: exact (ticks rounded up, so deadlines are never early; ns
 * rounded down, so rt_ticks_to_ns(rt_ns_to_ticks(ns)) >= ns), a constant two divisions at any counter
 * frequency and any value, and saturating at UINT64_MAX. Every timeout is converted so: one too long
 * for the counter (RT_FOREVER among them) never expires; a deadline never wraps around to the past.
 */
uint64_t rt_ns_to_ticks(rt_time_t ns);
rt_time_t rt_ticks_to_ns(uint64_t ticks);

#endif /* RTOS_TIME_H */
