/*
 * Scheduling: threads run by priority and first come first within a priority (SCHED_FIFO), SCHED_RR
 * slices two busy threads of one priority (and SCHED_FIFO does not), pthread_setschedprio moves a
 * thread at once, and <sched.h>'s calls on the calling thread with their error paths.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "rtos/time.h"
#include "threads.h"

/* ---- order of running */
static char order[16];
static unsigned order_len;
static void *record(void *arg)
{
    order[order_len++] = (char)(uintptr_t)arg;
    return NULL;
}

/* ---- round robin: two busy threads of one priority, each noting when the other ran in between */
static volatile int last_runner;
static volatile unsigned handovers;
static volatile rt_time_t busy_until;
static void *busy(void *arg)
{
    int me = (int)(uintptr_t)arg;
    while (rt_time_now() < busy_until) {
        if (last_runner != me) {
            last_runner = me;
            handovers++;
        }
    }
    return NULL;
}

static unsigned run_pair(int policy)
{
    last_runner = 0;
    handovers = 0;
    busy_until = rt_time_now() + RT_MSEC(60);
    pthread_t a = spawn_policy(busy, (void *)1, policy, 50);
    pthread_t b = spawn_policy(busy, (void *)2, policy, 50);
    CHECK_EQ(pthread_join(a, NULL), 0);
    CHECK_EQ(pthread_join(b, NULL), 0);
    return handovers;
}

int main(void)
{
    /* created below main's priority, they run when main waits: most urgent first, then in order of
     * creation within a priority */
    pthread_t t[6];
    t[0] = spawn_policy(record, (void *)'a', SCHED_FIFO, 10);
    t[1] = spawn_policy(record, (void *)'b', SCHED_FIFO, 30);
    t[2] = spawn_policy(record, (void *)'c', SCHED_FIFO, 20);
    t[3] = spawn_policy(record, (void *)'d', SCHED_FIFO, 30);
    t[4] = spawn_policy(record, (void *)'e', SCHED_FIFO, 20);
    t[5] = spawn_policy(record, (void *)'f', SCHED_FIFO, 30);
    CHECK_EQ(order_len, 0);
    for (int i = 0; i < 6; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    }
    CHECK_EQ(order_len, 6);
    CHECK(memcmp(order, "bdfcea", 6) == 0);

    /* a thread above main runs at once */
    order_len = 0;
    t[0] = spawn_policy(record, (void *)'h', SCHED_FIFO, 200);
    CHECK_EQ(order_len, 1);
    CHECK_EQ(pthread_join(t[0], NULL), 0);

    /* pthread_setschedprio: a waiting thread raised above main runs at once */
    order_len = 0;
    t[0] = spawn_policy(record, (void *)'r', SCHED_FIFO, 10);
    CHECK_EQ(order_len, 0);
    CHECK_EQ(pthread_setschedprio(t[0], 129), 0);
    CHECK_EQ(order_len, 1);
    CHECK_EQ(pthread_join(t[0], NULL), 0);

    /* SCHED_RR: 60 ms of two busy threads, 10 ms slices: they take turns about 6 times.
     * SCHED_FIFO: the first runs to the end, after which the second finds the time over: one. */
    unsigned rr = run_pair(SCHED_RR);
    CHECK(rr >= 5 && rr <= 8);
    unsigned fifo = run_pair(SCHED_FIFO);
    CHECK_EQ(fifo, 1);
    unsigned other = run_pair(SCHED_OTHER);
    CHECK(other >= 5 && other <= 8);

    /* <sched.h> */
    CHECK_EQ(sched_get_priority_min(SCHED_FIFO), 1);
    CHECK_EQ(sched_get_priority_max(SCHED_FIFO), 255);
    CHECK_EQ(sched_get_priority_min(SCHED_RR), 1);
    CHECK_EQ(sched_get_priority_max(SCHED_RR), 255);
    CHECK_EQ(sched_get_priority_max(SCHED_OTHER), 255);
    errno = 0;
    CHECK_EQ(sched_get_priority_max(77), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(sched_get_priority_min(-1), -1);
    CHECK_EQ(errno, EINVAL);
    struct timespec ts;
    CHECK_EQ(sched_rr_get_interval(0, &ts), 0);
    CHECK(ts.tv_sec == 0 && ts.tv_nsec == RTMUX_SCHED_RR_INTERVAL_NS);
    errno = 0;
    CHECK_EQ(sched_rr_get_interval(2, &ts), -1);
    CHECK_EQ(errno, ESRCH);
    struct sched_param p;
    CHECK_EQ(sched_getparam(0, &p), 0);
    CHECK_EQ(p.sched_priority, 128);
    CHECK_EQ(sched_getscheduler(1), SCHED_FIFO);
    p.sched_priority = 100;
    CHECK_EQ(sched_setscheduler(0, SCHED_RR, &p), SCHED_FIFO);
    CHECK_EQ(sched_getscheduler(0), SCHED_RR);
    CHECK_EQ(sched_getparam(1, &p), 0);
    CHECK_EQ(p.sched_priority, 100);
    p.sched_priority = 128;
    CHECK_EQ(sched_setparam(0, &p), 0);
    CHECK_EQ(sched_getscheduler(0), SCHED_RR);
    CHECK_EQ(sched_setscheduler(0, SCHED_FIFO, &p), SCHED_RR);
    errno = 0;
    p.sched_priority = 0;
    CHECK_EQ(sched_setparam(0, &p), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(sched_setscheduler(0, 12, &p), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(sched_getparam(99, &p), -1);
    CHECK_EQ(errno, ESRCH);
    errno = 0;
    CHECK_EQ(sched_getscheduler(-5), -1);
    CHECK_EQ(errno, ESRCH);
    errno = 0;
    CHECK_EQ(sched_getparam(0, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(sched_yield(), 0);
    CHECK_EQ(sched_getparam(0, &p), 0);
    CHECK_EQ(p.sched_priority, 128);

    POSIX_TEST_END("sched");
}
