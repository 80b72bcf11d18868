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

/* Relative and absolute sleeps. rt_sleep_until() returns at or after `deadline`, never before. */
int rt_sleep(rt_time_t duration);
int rt_sleep_until(rt_time_t deadline);

/*
 * Makes the caller periodic: first release at `start` (absolute ns; 0 = now + period), then every
 * `period` ns. Release points are absolute, so they do not drift.
 */
int rt_periodic_start(rt_time_t start, rt_time_t period);

/*
 * Waits for the next release point. If release points were missed, returns at once with RT_EOVERRUN,
 * *overruns = number of points missed, and the latest passed point as current release; otherwise
 * RT_OK with *overruns = 0. *release (optional) receives the current release point (ns).
 */
int rt_periodic_wait(uint64_t *overruns, rt_time_t *release);

/* Conversions between ns and counter ticks (ticks rounded up, so deadlines are never early). */
uint64_t rt_ns_to_ticks(rt_time_t ns);
rt_time_t rt_ticks_to_ns(uint64_t ticks);

#endif /* RTOS_TIME_H */
