/*
 * What the semaphore and message-queue tests share: times in ns, a sleep in ms, and helper threads on
 * the rtos API (so that these tests do not depend on the pthreads part), their stacks from the heap.
 */
#ifndef POSIX_TEST_HELPERS_H
#define POSIX_TEST_HELPERS_H

#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "rtos/thread.h"

static inline long long ns_of(clockid_t clk)
{
    struct timespec ts;
    (void)clock_gettime(clk, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline struct timespec ts_of(long long ns)
{
    return (struct timespec){.tv_sec = (time_t)(ns / 1000000000LL), .tv_nsec = (long)(ns % 1000000000LL)};
}

static inline void msleep(long ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};
    (void)nanosleep(&ts, NULL);
}

#define HELPERS 4
static rt_thread_t helper[HELPERS];
static void *helper_stack[HELPERS];

static inline void start(int i, void (*fn)(void *), void *arg, unsigned prio)
{
    helper_stack[i] = aligned_alloc(16, 16384);
    CHECK_EQ(rt_thread_create(&helper[i], "helper", fn, arg, helper_stack[i], 16384, prio), RT_OK);
}

static inline void join(int i)
{
    CHECK_EQ(rt_thread_join(&helper[i], RT_SEC(2)), RT_OK);
    free(helper_stack[i]);
}

#endif /* POSIX_TEST_HELPERS_H */
