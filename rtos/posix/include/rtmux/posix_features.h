/*
 * The POSIX options the rtos's POSIX layer implements (The Open Group Base Specifications, <unistd.h>):
 * defined before the C library's headers, which declare an option's functions only when its macro is
 * set. Everything listed exists in full, with the deviations docs/posix.md names; an option not listed
 * does not exist (sysconf() says -1 for it).
 */
#ifndef RTMUX_POSIX_FEATURES_H
#define RTMUX_POSIX_FEATURES_H

#define _POSIX_THREADS                    200809L
#define _POSIX_THREAD_ATTR_STACKADDR      200809L
#define _POSIX_THREAD_ATTR_STACKSIZE      200809L
#define _POSIX_THREAD_PRIORITY_SCHEDULING 200809L
#define _POSIX_THREAD_PRIO_INHERIT        200809L
#define _POSIX_THREAD_PRIO_PROTECT        200809L
#define _POSIX_THREAD_CPUTIME             200809L
#define _POSIX_CPUTIME                    200809L
#define _POSIX_THREAD_SAFE_FUNCTIONS      200809L
#define _POSIX_PRIORITY_SCHEDULING        200809L
#define _POSIX_TIMERS                     200809L
#define _POSIX_MONOTONIC_CLOCK            200809L
#define _POSIX_CLOCK_SELECTION            200809L
#define _POSIX_TIMEOUTS                   200809L
#define _POSIX_SEMAPHORES                 200809L
#define _POSIX_MESSAGE_PASSING            200809L
#define _POSIX_BARRIERS                   200809L
#define _POSIX_READER_WRITER_LOCKS        200809L
#define _POSIX_SPIN_LOCKS                 200809L

#endif /* RTMUX_POSIX_FEATURES_H */
