/*
 * The POSIX layer's cost over the native rtos API, in one boot (issue 24, `make bench`): for each pair
 * the same work through POSIX and through rt_ calls, timed with the same clock (rt_time_now, so the
 * clock call itself costs both sides the same).
 *   mutex     uncontended lock + unlock, ns per pair (default mutex attributes: what a user gets)
 *   wake      a post/give to a semaphore a more urgent thread waits on: from before the call to the
 *             waiter running, ns (average and worst of WAKES)
 *   periodic  a 1 kHz periodic thread's lateness after its release point: clock_nanosleep(TIMER_ABSTIME)
 *             against rt_periodic_wait, ns (average and worst of PERIODS)
 * Each prints `PXC| NAME native_ns A posix_ns B ratio R` (A, B averages; R = B / A) and the worst
 * cases `PXC| NAME-max native_ns A posix_ns B`; the run ends with exit(0).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <rtmux/main.h>
#include <rtos/rtos.h>

RTMUX_MAIN_THREAD(100, 16 * 1024);

#define PAIRS     20000u
#define WAKES     5000u
#define PERIODS   2000u
#define PERIOD_NS 1000000u
#define HIGH_PRIO 250

struct acc {
    uint64_t sum, max, n;
};

static void add(struct acc *s, uint64_t v)
{
    s->sum += v;
    s->max = v > s->max ? v : s->max;
    s->n++;
}

/* ns with 3 decimals of an average (sum / n), printed as x.yyy */
static void print_pair(const char *name, uint64_t native_sum, uint64_t posix_sum, uint64_t n)
{
    uint64_t a = native_sum * 1000u / n, b = posix_sum * 1000u / n;
    uint64_t r = a != 0 ? b * 1000u / a : 0;
    printf("PXC| %s native_ns %llu.%03llu posix_ns %llu.%03llu ratio %llu.%03llu\n", name,
           (unsigned long long)(a / 1000u), (unsigned long long)(a % 1000u), (unsigned long long)(b / 1000u),
           (unsigned long long)(b % 1000u), (unsigned long long)(r / 1000u), (unsigned long long)(r % 1000u));
}

static void print_max(const char *name, uint64_t native_max, uint64_t posix_max)
{
    printf("PXC| %s-max native_ns %llu posix_ns %llu\n", name, (unsigned long long)native_max,
           (unsigned long long)posix_max);
}

/* A SCHED_FIFO pthread at HIGH_PRIO, the native side's priority; says so on the console if it fails. */
static int start_high(pthread_t *t, void *(*fn)(void *))
{
    pthread_attr_t attr;
    struct sched_param sp = {.sched_priority = HIGH_PRIO};
    (void)pthread_attr_init(&attr);
    (void)pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
    (void)pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
    (void)pthread_attr_setschedparam(&attr, &sp);
    int err = pthread_create(t, &attr, fn, NULL);
    (void)pthread_attr_destroy(&attr);
    if (err != 0) {
        printf("PXC| error: pthread_create failed\n");
    }
    return err;
}

/* ---- mutex ---- */
static void mutex_cost(void)
{
    static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
    static rt_mutex_t rm;
    (void)rt_mutex_init(&rm);
    /* once each first: lazy initialisation and cold caches are not what is measured */
    (void)pthread_mutex_lock(&pm);
    (void)pthread_mutex_unlock(&pm);
    (void)rt_mutex_lock(&rm, RT_FOREVER);
    (void)rt_mutex_unlock(&rm);
    rt_time_t t0 = rt_time_now();
    for (unsigned i = 0; i < PAIRS; i++) {
        (void)rt_mutex_lock(&rm, RT_FOREVER);
        (void)rt_mutex_unlock(&rm);
    }
    rt_time_t t1 = rt_time_now();
    for (unsigned i = 0; i < PAIRS; i++) {
        (void)pthread_mutex_lock(&pm);
        (void)pthread_mutex_unlock(&pm);
    }
    rt_time_t t2 = rt_time_now();
    print_pair("mutex", t1 - t0, t2 - t1, PAIRS);
}

/* ---- wake-up through a semaphore ---- */
static sem_t psem;
static rt_sem_t rsem;
static volatile rt_time_t woke_at;
static volatile int stop;

static void *posix_waiter(void *arg)
{
    (void)arg;
    while (sem_wait(&psem) == 0 && !stop) {
        woke_at = rt_time_now();
    }
    return NULL;
}

static void native_waiter(void *arg)
{
    (void)arg;
    while (rt_sem_take(&rsem, RT_FOREVER) == RT_OK && !stop) {
        woke_at = rt_time_now();
    }
}

static void wake_cost(void)
{
    struct acc native = {0}, posix = {0};
    static rt_thread_t rt_waiter;
    RT_STACK_DEFINE(rt_waiter_stack, 8192);
    (void)rt_sem_init(&rsem, 0, 1);
    (void)rt_thread_create(&rt_waiter, "wake-native", native_waiter, NULL, rt_waiter_stack,
                           sizeof(rt_waiter_stack), HIGH_PRIO);
    for (unsigned i = 0; i < WAKES + 1; i++) {
        rt_time_t t0 = rt_time_now();
        (void)rt_sem_give(&rsem); /* the waiter runs here and takes the time */
        if (i > 0) {
            add(&native, woke_at - t0);
        }
    }
    stop = 1;
    (void)rt_sem_give(&rsem);
    (void)rt_thread_join(&rt_waiter, RT_FOREVER);

    stop = 0;
    (void)sem_init(&psem, 0, 0);
    pthread_t waiter;
    if (start_high(&waiter, posix_waiter) != 0) {
        return;
    }
    for (unsigned i = 0; i < WAKES + 1; i++) {
        rt_time_t t0 = rt_time_now();
        (void)sem_post(&psem);
        if (i > 0) {
            add(&posix, woke_at - t0);
        }
    }
    stop = 1;
    (void)sem_post(&psem);
    (void)pthread_join(waiter, NULL);
    print_pair("wake", native.sum, posix.sum, WAKES);
    print_max("wake", native.max, posix.max);
}

/* ---- periodic wake-up ---- */
static struct acc periodic_native, periodic_posix;

static void native_periodic(void *arg)
{
    (void)arg;
    (void)rt_periodic_start(rt_time_now() + PERIOD_NS, PERIOD_NS);
    for (unsigned i = 0; i < PERIODS; i++) {
        uint64_t overruns;
        rt_time_t release;
        (void)rt_periodic_wait(&overruns, &release);
        add(&periodic_native, rt_time_now() - release);
    }
}

static void *posix_periodic(void *arg)
{
    (void)arg;
    struct timespec next;
    (void)clock_gettime(CLOCK_MONOTONIC, &next);
    for (unsigned i = 0; i < PERIODS; i++) {
        next.tv_nsec += (long)PERIOD_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        (void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        rt_time_t deadline = (rt_time_t)next.tv_sec * 1000000000u + (rt_time_t)next.tv_nsec;
        add(&periodic_posix, rt_time_now() - deadline);
    }
    return NULL;
}

static void periodic_cost(void)
{
    static rt_thread_t t;
    RT_STACK_DEFINE(stack, 8192);
    (void)rt_thread_create(&t, "periodic-native", native_periodic, NULL, stack, sizeof(stack), HIGH_PRIO);
    (void)rt_thread_join(&t, RT_FOREVER);

    pthread_t p;
    if (start_high(&p, posix_periodic) != 0) {
        return;
    }
    (void)pthread_join(p, NULL);
    print_pair("periodic", periodic_native.sum, periodic_posix.sum, PERIODS);
    print_max("periodic", periodic_native.max, periodic_posix.max);
}

int main(void)
{
    mutex_cost();
    wake_cost();
    periodic_cost();
    printf("PXC| done\n");
    return 0;
}
