/*
 * What the pthread tests share: threads created with an explicit priority (and policy), and absolute
 * times on the rtos's clock.
 */
#ifndef POSIX_TEST_THREADS_H
#define POSIX_TEST_THREADS_H

#include <pthread.h>
#include <time.h>

#include "check.h"
#include "rtos/time.h"

/* A thread at priority `prio` with `policy`, or the attributes' default policy for a negative one. */
static inline pthread_t spawn_policy(void *(*fn)(void *), void *arg, int policy, int prio)
{
    pthread_attr_t a;
    struct sched_param p = {.sched_priority = prio};
    pthread_t t = NULL;
    CHECK_EQ(pthread_attr_init(&a), 0);
    CHECK_EQ(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED), 0);
    if (policy >= 0) {
        CHECK_EQ(pthread_attr_setschedpolicy(&a, policy), 0);
    }
    CHECK_EQ(pthread_attr_setschedparam(&a, &p), 0);
    CHECK_EQ(pthread_create(&t, &a, fn, arg), 0);
    CHECK_EQ(pthread_attr_destroy(&a), 0);
    return t;
}

static inline pthread_t spawn(void *(*fn)(void *), void *arg, int prio)
{
    return spawn_policy(fn, arg, -1, prio);
}

/* An absolute time `ns` from now on the rtos's clock: CLOCK_MONOTONIC, and CLOCK_REALTIME too while
 * nothing has set it (these tests do not). */
static inline struct timespec abs_in(rt_time_t ns)
{
    rt_time_t t = rt_time_now() + ns;
    return (struct timespec){.tv_sec = (time_t)(t / 1000000000u), .tv_nsec = (long)(t % 1000000000u)};
}

#endif /* POSIX_TEST_THREADS_H */
