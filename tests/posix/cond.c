/*
 * Condition variables: signals wake the most urgent waiter first, first come first within a priority;
 * broadcast wakes all; timed waits on CLOCK_MONOTONIC and CLOCK_REALTIME expire on time; a cancelled
 * waiter holds the mutex in its cleanup handler; destroy right after a broadcast; the error paths.
 *
 * A step of CLOCK_REALTIME (clock_settime) during a CLOCK_MONOTONIC wait is not tested here: this part
 * of the POSIX layer has no clock_settime. The monotonic wait's deadline is converted from that clock
 * alone (posix_abs_timeout), which no setting of CLOCK_REALTIME changes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "rtos/time.h"
#include "threads.h"

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready; /* under mutex: waiters that are waiting */
static int go;    /* under mutex: the predicate */

static char order[16];
static unsigned order_len;

/* Waits until signalled (a signal sets go's bit for exactly one waiter: the one woken). */
static void *waiter(void *arg)
{
    CHECK_EQ(pthread_mutex_lock(&mutex), 0);
    ready++;
    while (go == 0) {
        CHECK_EQ(pthread_cond_wait(&cond, &mutex), 0);
    }
    go--;
    order[order_len++] = (char)(uintptr_t)arg;
    CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
    return NULL;
}

static void wait_ready(int n)
{
    for (;;) {
        CHECK_EQ(pthread_mutex_lock(&mutex), 0);
        int r = ready;
        CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
        if (r >= n) {
            return;
        }
        (void)rt_sleep(RT_USEC(200));
    }
}

/* ---- cancellation while waiting */
static int cleanup_had_mutex;
static void unlock_cleanup(void *arg)
{
    pthread_mutex_t *m = arg;
    /* The standard: the waiter holds the mutex again when its cleanup handlers run. */
    cleanup_had_mutex = pthread_mutex_unlock(m) == 0;
}
static void *cancelled_waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&mutex), 0);
    ready++;
    pthread_cleanup_push(unlock_cleanup, &mutex);
    for (;;) {
        (void)pthread_cond_wait(&cond, &mutex);
    }
    pthread_cleanup_pop(1);
    return NULL;
}

/* ---- a condition variable destroyed as soon as its waiters are woken */
struct shortlived {
    pthread_mutex_t m;
    pthread_cond_t c;
    int flag;
};
static void *shortlived_waiter(void *arg)
{
    struct shortlived *s = arg;
    CHECK_EQ(pthread_mutex_lock(&s->m), 0);
    s->flag++;
    while (s->flag < 100) {
        CHECK_EQ(pthread_cond_wait(&s->c, &s->m), 0);
    }
    CHECK_EQ(pthread_mutex_unlock(&s->m), 0);
    return NULL;
}

static int other_wait_result;
static pthread_mutex_t other_mutex;
static void *wait_other_mutex(void *arg)
{
    (void)arg;
    struct timespec ts = abs_in(RT_MSEC(1));
    CHECK_EQ(pthread_mutex_lock(&other_mutex), 0);
    other_wait_result = pthread_cond_timedwait(&cond, &other_mutex, &ts);
    CHECK_EQ(pthread_mutex_unlock(&other_mutex), 0);
    return NULL;
}

int main(void)
{
    /* order: waiters at 10, 30, 20, 30, 20 (a, b, c, d, e); one signal at a time: b d c e a */
    pthread_t t[5];
    static const int prios[5] = {10, 30, 20, 30, 20};
    for (int i = 0; i < 5; i++) {
        t[i] = spawn(waiter, (void *)(uintptr_t)('a' + i), prios[i]);
        wait_ready(i + 1); /* each is waiting before the next comes: the order of arrival is known */
    }
    for (int i = 0; i < 5; i++) {
        CHECK_EQ(pthread_mutex_lock(&mutex), 0);
        go++;
        CHECK_EQ(pthread_cond_signal(&cond), 0);
        CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
        (void)rt_sleep(RT_MSEC(1)); /* the woken one runs */
        CHECK_EQ(order_len, (unsigned)i + 1);
    }
    for (int i = 0; i < 5; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    }
    CHECK(memcmp(order, "bdcea", 5) == 0);

    /* broadcast wakes them all */
    ready = 0;
    order_len = 0;
    for (int i = 0; i < 4; i++) {
        t[i] = spawn(waiter, (void *)'w', 50);
    }
    wait_ready(4);
    CHECK_EQ(pthread_mutex_lock(&mutex), 0);
    go = 4;
    CHECK_EQ(pthread_cond_broadcast(&cond), 0);
    CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    }
    CHECK_EQ(order_len, 4);
    CHECK_EQ(go, 0);
    CHECK_EQ(pthread_cond_signal(&cond), 0); /* nobody waits: nothing happens */

    /* timed waits expire on time: CLOCK_REALTIME (the default) and CLOCK_MONOTONIC */
    CHECK_EQ(pthread_mutex_lock(&mutex), 0);
    struct timespec ts = abs_in(RT_MSEC(20));
    rt_time_t t0 = rt_time_now();
    CHECK_EQ(pthread_cond_timedwait(&cond, &mutex, &ts), ETIMEDOUT);
    rt_time_t waited = rt_time_now() - t0;
    CHECK(waited >= RT_MSEC(20) && waited < RT_MSEC(21));
    pthread_condattr_t ca;
    pthread_cond_t mono;
    clockid_t clk;
    CHECK_EQ(pthread_condattr_init(&ca), 0);
    CHECK_EQ(pthread_condattr_getclock(&ca, &clk), 0);
    CHECK_EQ(clk, CLOCK_REALTIME);
    CHECK_EQ(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC), 0);
    CHECK_EQ(pthread_condattr_getclock(&ca, &clk), 0);
    CHECK_EQ(clk, CLOCK_MONOTONIC);
    CHECK_EQ(pthread_cond_init(&mono, &ca), 0);
    ts = abs_in(RT_MSEC(30));
    t0 = rt_time_now();
    CHECK_EQ(pthread_cond_timedwait(&mono, &mutex, &ts), ETIMEDOUT);
    waited = rt_time_now() - t0;
    CHECK(waited >= RT_MSEC(30) && waited < RT_MSEC(31));
    struct timespec past = {.tv_sec = 0, .tv_nsec = 5};
    CHECK_EQ(pthread_cond_timedwait(&mono, &mutex, &past), ETIMEDOUT);
    struct timespec bad = {.tv_sec = 1, .tv_nsec = -1};
    CHECK_EQ(pthread_cond_timedwait(&mono, &mutex, &bad), EINVAL);
    bad.tv_nsec = 1000000000L;
    CHECK_EQ(pthread_cond_timedwait(&mono, &mutex, &bad), EINVAL);
    CHECK_EQ(pthread_cond_timedwait(&mono, &mutex, NULL), EINVAL);
    CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
    CHECK_EQ(pthread_cond_destroy(&mono), 0);
    CHECK_EQ(pthread_cond_signal(&mono), EINVAL);
    CHECK_EQ(pthread_condattr_setclock(&ca, CLOCK_THREAD_CPUTIME_ID), EINVAL);
    CHECK_EQ(pthread_condattr_setclock(&ca, (clockid_t)77), EINVAL);
    int v;
    CHECK_EQ(pthread_condattr_getpshared(&ca, &v), 0);
    CHECK_EQ(v, PTHREAD_PROCESS_PRIVATE);
    CHECK_EQ(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED), 0);
    CHECK_EQ(pthread_condattr_setpshared(&ca, 7), EINVAL);
    CHECK_EQ(pthread_condattr_destroy(&ca), 0);
    CHECK_EQ(pthread_condattr_destroy(&ca), EINVAL);
    CHECK_EQ(pthread_cond_init(&mono, &ca), EINVAL);

    /* waiting without the mutex, with a mutex never initialised, on a cond never initialised */
    pthread_mutexattr_t ma;
    pthread_mutex_t ec;
    CHECK_EQ(pthread_mutexattr_init(&ma), 0);
    CHECK_EQ(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK), 0);
    CHECK_EQ(pthread_mutex_init(&ec, &ma), 0);
    CHECK_EQ(pthread_cond_wait(&cond, &ec), EPERM);
    pthread_mutex_t zm;
    memset(&zm, 0, sizeof(zm));
    CHECK_EQ(pthread_cond_wait(&cond, &zm), EINVAL);
    pthread_cond_t zc;
    memset(&zc, 0, sizeof(zc));
    CHECK_EQ(pthread_mutex_lock(&ec), 0);
    CHECK_EQ(pthread_cond_wait(&zc, &ec), EINVAL);
    CHECK_EQ(pthread_cond_signal(&zc), EINVAL);
    CHECK_EQ(pthread_cond_broadcast(NULL), EINVAL);
    CHECK_EQ(pthread_cond_destroy(&zc), EINVAL);
    CHECK_EQ(pthread_cond_init(NULL, NULL), EINVAL);
    /* a recursive mutex locked twice is released whole while waiting, and held twice after */
    pthread_mutex_t rm;
    CHECK_EQ(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE), 0);
    CHECK_EQ(pthread_mutex_init(&rm, &ma), 0);
    CHECK_EQ(pthread_mutex_lock(&rm), 0);
    CHECK_EQ(pthread_mutex_lock(&rm), 0);
    ts = abs_in(RT_MSEC(1));
    CHECK_EQ(pthread_cond_timedwait(&cond, &rm, &ts), ETIMEDOUT);
    CHECK_EQ(pthread_mutex_unlock(&rm), 0);
    CHECK_EQ(pthread_mutex_unlock(&rm), 0);
    CHECK_EQ(pthread_mutex_unlock(&rm), EPERM);
    CHECK_EQ(pthread_mutex_destroy(&rm), 0);
    CHECK_EQ(pthread_mutexattr_destroy(&ma), 0);
    CHECK_EQ(pthread_mutex_unlock(&ec), 0);
    CHECK_EQ(pthread_mutex_destroy(&ec), 0);

    /* a waiter holds the cond's mutex; destroy is EBUSY, and another mutex EINVAL, meanwhile */
    ready = 0;
    go = 0;
    order_len = 0;
    t[0] = spawn(waiter, (void *)'z', 50);
    wait_ready(1);
    CHECK_EQ(pthread_cond_destroy(&cond), EBUSY);
    CHECK_EQ(pthread_mutex_init(&other_mutex, NULL), 0);
    t[1] = spawn(wait_other_mutex, NULL, 60);
    CHECK_EQ(pthread_join(t[1], NULL), 0);
    CHECK_EQ(other_wait_result, EINVAL);
    CHECK_EQ(pthread_mutex_destroy(&other_mutex), 0);
    CHECK_EQ(pthread_mutex_lock(&mutex), 0);
    go = 1;
    CHECK_EQ(pthread_cond_signal(&cond), 0);
    CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
    CHECK_EQ(pthread_join(t[0], NULL), 0);
    CHECK_EQ(order_len, 1);

    /* cancelled while waiting: the cleanup handler holds the mutex and releases it */
    ready = 0;
    t[0] = spawn(cancelled_waiter, NULL, 50);
    wait_ready(1);
    CHECK_EQ(pthread_cancel(t[0]), 0);
    void *ret = NULL;
    CHECK_EQ(pthread_join(t[0], &ret), 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK_EQ(cleanup_had_mutex, 1);
    CHECK_EQ(pthread_mutex_trylock(&mutex), 0); /* released by the handler */
    CHECK_EQ(pthread_mutex_unlock(&mutex), 0);

    /* destroyed, and its memory written over, as soon as the broadcast is given: the woken waiters
     * (more urgent than main) are all out of it before the broadcast returns */
    static struct shortlived s;
    CHECK_EQ(pthread_mutex_init(&s.m, NULL), 0);
    CHECK_EQ(pthread_cond_init(&s.c, NULL), 0);
    for (int i = 0; i < 3; i++) {
        t[i] = spawn(shortlived_waiter, &s, 140);
    }
    CHECK_EQ(s.flag, 3);
    CHECK_EQ(pthread_mutex_lock(&s.m), 0);
    s.flag = 100;
    CHECK_EQ(pthread_cond_broadcast(&s.c), 0);
    CHECK_EQ(pthread_cond_destroy(&s.c), 0);
    memset(&s.c, 0xa5, sizeof(s.c));
    CHECK_EQ(pthread_mutex_unlock(&s.m), 0);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
    }
    CHECK_EQ(pthread_mutex_destroy(&s.m), 0);

    /* a copy is not a condition variable */
    pthread_cond_t cc;
    memcpy(&cc, &cond, sizeof(cc));
    CHECK_EQ(pthread_cond_signal(&cc), EINVAL);
    CHECK_EQ(pthread_cond_destroy(&cc), EINVAL);

    CHECK_EQ(pthread_cond_destroy(&cond), 0);
    CHECK_EQ(pthread_cond_signal(&cond), EINVAL);
    POSIX_TEST_END("cond");
}
