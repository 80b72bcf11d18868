/*
 * Internal interface of the POSIX layer (rtos/posix/): what its files share. The layer is built on the
 * public rtos API only (rtos/include/rtos/); nothing here reaches into the kernel.
 */
#ifndef RTOS_POSIX_H
#define RTOS_POSIX_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "rtos/kobj.h"
#include "rtos/types.h"

/* The errno value for an rtos status code (RT_ETIMEDOUT -> ETIMEDOUT, RT_EWOULDBLOCK -> EAGAIN, ...). */
int posix_errno(int rt_status);

/*
 * A cancellation point (pthread.c): a pending pthread_cancel of the calling thread, if its cancel state
 * allows, ends the thread here (its cleanup handlers and destructors run). Blocking calls that are
 * cancellation points call it on entry (sem_wait, nanosleep, mq_receive, ...).
 */
void posix_testcancel(void);

/* Whether ts is a valid time: tv_sec >= 0 and 0 <= tv_nsec < 1e9 (EINVAL otherwise). */
bool posix_timespec_valid(const struct timespec *ts);

/*
 * An absolute time is valid when 0 <= tv_nsec < 1e9: the standard's EINVAL for absolute waits names
 * the nanoseconds only, and a negative tv_sec is a time before the Epoch, passed already on either
 * clock (neither is ever negative here), so posix_abstime_ns gives 0 for it.
 */
bool posix_abstime_valid(const struct timespec *ts);
rt_time_t posix_abstime_ns(const struct timespec *ts);

/* ts as ns, saturated at RT_FOREVER - 1 (a time that far never comes, but is not "forever"). */
rt_time_t posix_timespec_ns(const struct timespec *ts);
struct timespec posix_ns_timespec(rt_time_t ns);

/*
 * CLOCK_REALTIME is CLOCK_MONOTONIC (the rtos's time since boot) plus this offset in ns, which
 * clock_settime(CLOCK_REALTIME) sets; 0 at boot (the Epoch at boot: the rtos has no RTC).
 */
extern int64_t posix_realtime_offset;

/*
 * The rtos timeout (a duration, RT_NO_WAIT if already passed) for an absolute time `abs` on clock
 * `clk` (CLOCK_REALTIME or CLOCK_MONOTONIC), as of now. Returns 0, or EINVAL for a bad clock or time
 * (posix_abstime_valid: a time before the Epoch has passed).
 * A later step of CLOCK_REALTIME does not change a wait already computed (docs/posix.md).
 */
int posix_abs_timeout(clockid_t clk, const struct timespec *abs, rt_time_t *timeout);

/*
 * ---- clocks (clock.c) ----
 * The value of clock clk in ns: CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID or
 * CLOCK_THREAD_CPUTIME_ID (the caller's). Returns 0, or EINVAL for another clock.
 */
int posix_clock_ns(clockid_t clk, rt_time_t *ns);
/* CLOCK_REALTIME or CLOCK_MONOTONIC: the clocks a timer or an absolute wait may use. */
bool posix_clock_waitable(clockid_t clk);

/*
 * ---- names of named objects (util.c): semaphores and message queues ----
 * A name is "/" followed by 1 to NAME_MAX bytes, none of them '/'. Returns 0, EINVAL (NULL, no
 * leading '/', empty, or another '/'), or ENAMETOOLONG.
 */
int posix_name_check(const char *name);
/* The checks of sem_unlink and mq_unlink before they look the name up: a name no object can have is
 * ENOENT (their errors have no EINVAL), ENAMETOOLONG, or EPERM from an interrupt handler; else 0. */
int posix_unlink_check(const char *name);

/*
 * pthread_getcpuclockid's clocks: the address of the thread's rtos object with bit 0 set (rtos objects
 * are 8-byte aligned; the standard clock IDs are small even and odd numbers below 16, so none is one).
 * posix_thread_clock returns the thread of such an ID, NULL for any other value, without reading
 * anything outside the image (an ID made up by a caller cannot fault).
 */
#define POSIX_THREAD_CLOCK_TAG 1u
const rt_thread_t *posix_thread_clock(clockid_t clk);

#endif /* RTOS_POSIX_H */
