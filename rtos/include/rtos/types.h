/*
 * Basic rtos types: time, timeouts and status codes.
 */
#ifndef RTOS_TYPES_H
#define RTOS_TYPES_H

#include <stdint.h>

/* Nanoseconds: an absolute time since boot, or a duration. 2^64 ns is 584 years. */
typedef uint64_t rt_time_t;

/* Timeouts of blocking calls are durations in ns, with two special values. */
#define RT_NO_WAIT ((rt_time_t)0)
#define RT_FOREVER (~(rt_time_t)0)

#define RT_USEC(n) ((rt_time_t)(n)*1000u)
#define RT_MSEC(n) ((rt_time_t)(n)*1000000u)
#define RT_SEC(n)  ((rt_time_t)(n)*1000000000u)

/* Every API returning int returns RT_OK or one of these negative codes. */
enum rt_status {
    RT_OK = 0,
    RT_EINVAL = -1,      /* bad handle, uninitialised object or bad argument */
    RT_EPERM = -2,       /* not allowed here: blocking in an interrupt, unlocking a mutex not owned */
    RT_ETIMEDOUT = -3,   /* the timeout expired */
    RT_EWOULDBLOCK = -4, /* RT_NO_WAIT and the call would have blocked */
    RT_EDEADLK = -5,     /* locking would deadlock (mutex already owned, or a lock cycle) */
    RT_EOVERFLOW = -6,   /* a counter would exceed its maximum */
    RT_EBUSY = -7,       /* the object is in use (e.g. re-creating a live thread) */
    RT_EOVERRUN = -8,    /* a periodic release point was missed */
    RT_ENOTCONN = -9,    /* a channel has no Linux program connected */
    RT_ENOENT = -10,     /* no such channel (or no V-Bus at all: bare metal) */
};

/* Short constant text for a status code, for diagnostics. */
const char *rt_strerror(int status);

#endif /* RTOS_TYPES_H */
