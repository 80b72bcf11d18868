/*
 * Mutexes: the types' error paths (EDEADLK, EPERM, EBUSY), recursion, timed locks, a static
 * initializer's first use by several threads, priority inheritance through a chain of three mutexes,
 * PTHREAD_PRIO_PROTECT ceilings, every EINVAL path; spin locks, which must not spin against a
 * preempted holder.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "rtos/sync.h"
#include "rtos/time.h"
#include "threads.h"

static void busy(rt_time_t ns)
{
    rt_time_t end = rt_time_now() + ns;
    while (rt_time_now() < end) {
    }
}

static void init_type(pthread_mutex_t *m, int type)
{
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_settype(&a, type), 0);
    CHECK_EQ(pthread_mutex_init(m, &a), 0);
    CHECK_EQ(pthread_mutexattr_destroy(&a), 0);
}

/* ---- another thread tries the mutex */
static int other_result[4];
static void *other_unlock_try(void *arg)
{
    pthread_mutex_t *m = arg;
    other_result[0] = pthread_mutex_unlock(m);
    other_result[1] = pthread_mutex_trylock(m);
    struct timespec ts = abs_in(RT_MSEC(5));
    rt_time_t t0 = rt_time_now();
    other_result[2] = pthread_mutex_timedlock(m, &ts);
    if (rt_time_now() - t0 < RT_MSEC(5)) {
        other_result[2] = -1; /* returned before its time */
    }
    struct timespec bad = {.tv_sec = 0, .tv_nsec = -1};
    other_result[3] = pthread_mutex_timedlock(m, &bad); /* must wait: the time is looked at */
    return NULL;
}

/* ---- a static initializer's first use by several threads at once */
static pthread_mutex_t stat = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned inside, overlap, total;
static void *static_user(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        CHECK_EQ(pthread_mutex_lock(&stat), 0);
        if (inside++ != 0) {
            overlap++;
        }
        (void)sched_yield(); /* the others run, and must wait */
        total++;
        inside--;
        CHECK_EQ(pthread_mutex_unlock(&stat), 0);
        (void)sched_yield();
    }
    return NULL;
}

/* ---- priority inheritance through three mutexes */
static pthread_mutex_t m1, m2, m3;
static char log_[16];
static unsigned log_len;
static void note(char c)
{
    log_[log_len++] = c;
}
static void *pi_low(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&m1), 0);
    (void)rt_sleep(RT_MSEC(5)); /* the chain forms meanwhile */
    busy(RT_MSEC(2));
    note('L');
    CHECK_EQ(pthread_mutex_unlock(&m1), 0);
    return NULL;
}
static void *pi_mid(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&m2), 0);
    CHECK_EQ(pthread_mutex_lock(&m1), 0); /* waits for low */
    note('M');
    CHECK_EQ(pthread_mutex_unlock(&m1), 0);
    CHECK_EQ(pthread_mutex_unlock(&m2), 0);
    return NULL;
}
static void *pi_high(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&m3), 0);
    CHECK_EQ(pthread_mutex_lock(&m2), 0); /* waits for mid, which waits for low */
    note('H');
    CHECK_EQ(pthread_mutex_unlock(&m2), 0);
    CHECK_EQ(pthread_mutex_unlock(&m3), 0);
    return NULL;
}
static void *pi_busy(void *arg)
{
    (void)arg;
    busy(RT_MSEC(20)); /* above low and mid, below high: only inheritance lets low run */
    note('X');
    return NULL;
}

/* ---- PTHREAD_PRIO_PROTECT */
static pthread_mutex_t pm;
static void *protect_holder(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&pm), 0);
    note('1');
    (void)rt_sleep(RT_MSEC(2)); /* the busy thread starts meanwhile, below the ceiling */
    busy(RT_MSEC(2));
    note('2');
    CHECK_EQ(pthread_mutex_unlock(&pm), 0);
    busy(RT_MSEC(1)); /* back at its own priority: the busy thread comes first */
    note('4');
    return NULL;
}
static void *protect_busy(void *arg)
{
    (void)arg;
    busy(RT_MSEC(5));
    note('3');
    return NULL;
}
static int high_lock_result;
static void *protect_too_high(void *arg)
{
    (void)arg;
    high_lock_result = pthread_mutex_lock(&pm);
    return NULL;
}

/* ---- PTHREAD_PRIO_PROTECT: hand-over to a waiter, and two ceilings held at once */
static pthread_mutex_t pm2;
static rt_time_t t_start;
static void *handover_a(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&pm), 0);
    note('a');
    (void)rt_sleep_until(t_start + RT_MSEC(2)); /* b comes and waits for pm */
    busy(RT_MSEC(1));
    CHECK_EQ(pthread_mutex_unlock(&pm), 0); /* to b, which runs at the ceiling at once */
    note('A');
    return NULL;
}
static void *handover_b(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&pm), 0);
    note('b');
    busy(RT_MSEC(2));                       /* x wakes meanwhile, below the ceiling */
    CHECK_EQ(pthread_mutex_unlock(&pm), 0); /* b is back at 20: x runs */
    note('B');
    return NULL;
}
static void *handover_x(void *arg)
{
    (void)arg;
    (void)rt_sleep_until(t_start + RT_USEC(3500));
    busy(RT_USEC(500));
    note('x');
    return NULL;
}
static void *nested_y(void *arg)
{
    (void)arg;
    note('2');
    return NULL;
}
static void *nested_c(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&pm), 0);  /* ceiling 50 */
    CHECK_EQ(pthread_mutex_lock(&pm2), 0); /* ceiling 70 */
    pthread_t y;
    pthread_attr_t a;
    struct sched_param p = {.sched_priority = 60};
    CHECK_EQ(pthread_attr_init(&a), 0);
    CHECK_EQ(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED), 0);
    CHECK_EQ(pthread_attr_setschedparam(&a, &p), 0);
    CHECK_EQ(pthread_create(&y, &a, nested_y, NULL), 0); /* below 70: waits */
    note('1');
    CHECK_EQ(pthread_mutex_unlock(&pm2), 0); /* at 50 now: y runs */
    note('3');
    CHECK_EQ(pthread_mutex_unlock(&pm), 0);
    CHECK_EQ(pthread_join(y, NULL), 0);
    return NULL;
}

/* ---- spin locks */
static pthread_spinlock_t spin;
static volatile int spin_holder_has_it;
static void *spin_low(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_spin_lock(&spin), 0);
    spin_holder_has_it = 1;
    busy(RT_MSEC(2)); /* preempted here by the high thread, which must not spin for ever */
    CHECK_EQ(pthread_spin_unlock(&spin), 0);
    return NULL;
}
static int spin_high_result = -1;
static void *spin_high(void *arg)
{
    (void)arg;
    spin_high_result = pthread_spin_lock(&spin);
    CHECK_EQ(pthread_spin_unlock(&spin), 0);
    return NULL;
}
static int spin_other[2];
static void *spin_other_thread(void *arg)
{
    (void)arg;
    spin_other[0] = pthread_spin_trylock(&spin);
    spin_other[1] = pthread_spin_unlock(&spin);
    return NULL;
}

int main(void)
{
    pthread_mutex_t m;
    pthread_t t;

    /* ERRORCHECK */
    init_type(&m, PTHREAD_MUTEX_ERRORCHECK);
    CHECK_EQ(pthread_mutex_unlock(&m), EPERM);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    CHECK_EQ(pthread_mutex_lock(&m), EDEADLK);
    CHECK_EQ(pthread_mutex_trylock(&m), EBUSY);
    CHECK_EQ(pthread_mutex_destroy(&m), EBUSY);
    CHECK_EQ(pthread_mutex_init(&m, NULL), EBUSY);
    t = spawn(other_unlock_try, &m, 200);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(other_result[0], EPERM);
    CHECK_EQ(other_result[1], EBUSY);
    CHECK_EQ(other_result[2], ETIMEDOUT);
    CHECK_EQ(other_result[3], EINVAL);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), EPERM);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);
    CHECK_EQ(pthread_mutex_lock(&m), EINVAL);
    CHECK_EQ(pthread_mutex_destroy(&m), EINVAL);

    /* RECURSIVE */
    init_type(&m, PTHREAD_MUTEX_RECURSIVE);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    CHECK_EQ(pthread_mutex_trylock(&m), 0);
    t = spawn(other_unlock_try, &m, 200);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(other_result[0], EPERM);
    CHECK_EQ(other_result[1], EBUSY);
    CHECK_EQ(other_result[2], ETIMEDOUT);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_destroy(&m), EBUSY);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), EPERM);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);

    /* NORMAL: relocking deadlocks; a timed relock waits until its time */
    init_type(&m, PTHREAD_MUTEX_NORMAL);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    CHECK_EQ(pthread_mutex_trylock(&m), EBUSY);
    struct timespec ts = abs_in(RT_MSEC(3));
    rt_time_t t0 = rt_time_now();
    CHECK_EQ(pthread_mutex_timedlock(&m, &ts), ETIMEDOUT);
    CHECK(rt_time_now() - t0 >= RT_MSEC(3));
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);

    /* DEFAULT (also PTHREAD_MUTEX_INITIALIZER's) behaves as ERRORCHECK */
    CHECK_EQ(pthread_mutex_init(&m, NULL), 0);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    CHECK_EQ(pthread_mutex_lock(&m), EDEADLK);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);
    pthread_mutex_t s = PTHREAD_MUTEX_INITIALIZER;
    CHECK_EQ(pthread_mutex_lock(&s), 0);
    CHECK_EQ(pthread_mutex_lock(&s), EDEADLK);
    CHECK_EQ(pthread_mutex_unlock(&s), 0);
    CHECK_EQ(pthread_mutex_destroy(&s), 0);

    /* timed lock: the time is looked at only when the lock must wait */
    CHECK_EQ(pthread_mutex_init(&m, NULL), 0);
    struct timespec bad = {.tv_sec = 0, .tv_nsec = 1000000000L};
    struct timespec past = {.tv_sec = 0, .tv_nsec = 0};
    CHECK_EQ(pthread_mutex_timedlock(&m, &bad), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_timedlock(&m, &past), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);

    /* EINVAL: a copy of a mutex, never initialised, NULL, attributes out of range */
    CHECK_EQ(pthread_mutex_init(&m, NULL), 0);
    pthread_mutex_t copy;
    memcpy(&copy, &m, sizeof(m));
    CHECK_EQ(pthread_mutex_lock(&copy), EINVAL);
    CHECK_EQ(pthread_mutex_unlock(&copy), EINVAL);
    CHECK_EQ(pthread_mutex_destroy(&copy), EINVAL);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);
    pthread_mutex_t zero;
    memset(&zero, 0, sizeof(zero));
    CHECK_EQ(pthread_mutex_lock(&zero), EINVAL);
    CHECK_EQ(pthread_mutex_trylock(&zero), EINVAL);
    CHECK_EQ(pthread_mutex_unlock(&zero), EINVAL);
    CHECK_EQ(pthread_mutex_lock(NULL), EINVAL);
    CHECK_EQ(pthread_mutex_init(NULL, NULL), EINVAL);
    pthread_mutexattr_t a;
    memset(&a, 0, sizeof(a));
    CHECK_EQ(pthread_mutex_init(&m, &a), EINVAL);
    CHECK_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_NORMAL), EINVAL);
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    int v;
    CHECK_EQ(pthread_mutexattr_gettype(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_MUTEX_DEFAULT);
    CHECK_EQ(pthread_mutexattr_settype(&a, 17), EINVAL);
    CHECK_EQ(pthread_mutexattr_getprotocol(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_PRIO_NONE);
    CHECK_EQ(pthread_mutexattr_setprotocol(&a, 17), ENOTSUP);
    CHECK_EQ(pthread_mutexattr_setprioceiling(&a, 0), EINVAL);
    CHECK_EQ(pthread_mutexattr_setprioceiling(&a, 256), EINVAL);
    CHECK_EQ(pthread_mutexattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_PROCESS_PRIVATE);
    /* one process: shared is accepted, and is what every object is anyway */
    CHECK_EQ(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
    CHECK_EQ(pthread_mutexattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_PROCESS_SHARED);
    CHECK_EQ(pthread_mutexattr_setpshared(&a, 7), EINVAL);
    CHECK_EQ(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_PRIVATE), 0);
    CHECK_EQ(pthread_mutexattr_destroy(&a), 0);
    CHECK_EQ(pthread_mutexattr_destroy(&a), EINVAL);
    CHECK_EQ(pthread_mutexattr_gettype(&a, &v), EINVAL);

    /* a static initializer's first use by three threads of one priority, with switches inside */
    pthread_t users[3];
    for (int i = 0; i < 3; i++) {
        users[i] = spawn(static_user, NULL, 60);
    }
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(pthread_join(users[i], NULL), 0);
    }
    CHECK_EQ(total, 150);
    CHECK_EQ(overlap, 0);

    /* priority inheritance through m1 <- m2 <- m3: low (10) holds m1, mid (20) holds m2 and waits for
     * m1, high (40) waits for m2; a busy thread at 30 must not delay low, which runs at 40 */
    pthread_mutexattr_t pi;
    CHECK_EQ(pthread_mutexattr_init(&pi), 0);
    CHECK_EQ(pthread_mutexattr_setprotocol(&pi, PTHREAD_PRIO_INHERIT), 0);
    CHECK_EQ(pthread_mutex_init(&m1, &pi), 0);
    CHECK_EQ(pthread_mutex_init(&m2, &pi), 0);
    CHECK_EQ(pthread_mutex_init(&m3, &pi), 0);
    pthread_t low = spawn(pi_low, NULL, 10);
    (void)rt_sleep(RT_MSEC(1)); /* low takes m1 and sleeps */
    pthread_t mid = spawn(pi_mid, NULL, 20);
    (void)rt_sleep(RT_MSEC(1)); /* mid takes m2, waits for m1 */
    pthread_t high = spawn(pi_high, NULL, 40);
    (void)rt_sleep(RT_MSEC(1)); /* high waits for m2 */
    pthread_t x = spawn(pi_busy, NULL, 30);
    CHECK_EQ(pthread_join(x, NULL), 0);
    CHECK_EQ(pthread_join(high, NULL), 0);
    CHECK_EQ(pthread_join(mid, NULL), 0);
    CHECK_EQ(pthread_join(low, NULL), 0);
    log_[log_len] = 0;
    CHECK_EQ(log_len, 4);
    CHECK(memcmp(log_, "LMHX", 4) == 0);
    /* the scheduling parameters stay the thread's own: inheritance is not a change of them */
    struct sched_param sp;
    int policy;
    CHECK_EQ(pthread_getschedparam(pthread_self(), &policy, &sp), 0);
    CHECK_EQ(sp.sched_priority, 128);
    CHECK_EQ(pthread_mutexattr_destroy(&pi), 0);

    /* PTHREAD_PRIO_PROTECT, ceiling 50: a holder at 10 runs at 50 while it holds the mutex, so the
     * busy thread at 30 waits until the unlock; a thread above the ceiling may not lock it */
    pthread_mutexattr_t pp;
    CHECK_EQ(pthread_mutexattr_init(&pp), 0);
    CHECK_EQ(pthread_mutexattr_setprotocol(&pp, PTHREAD_PRIO_PROTECT), 0);
    CHECK_EQ(pthread_mutexattr_setprioceiling(&pp, 50), 0);
    CHECK_EQ(pthread_mutexattr_getprioceiling(&pp, &v), 0);
    CHECK_EQ(v, 50);
    CHECK_EQ(pthread_mutex_init(&pm, &pp), 0);
    log_len = 0;
    pthread_t holder = spawn(protect_holder, NULL, 10);
    (void)rt_sleep(RT_MSEC(1)); /* holder locks pm and sleeps */
    pthread_t b = spawn(protect_busy, NULL, 30);
    CHECK_EQ(pthread_join(b, NULL), 0);
    CHECK_EQ(pthread_join(holder, NULL), 0);
    CHECK_EQ(log_len, 4);
    CHECK(memcmp(log_, "1234", 4) == 0);
    t = spawn(protect_too_high, NULL, 60);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(high_lock_result, EINVAL);
    CHECK_EQ(pthread_mutex_lock(&pm), EINVAL); /* main, at 128, too */
    int old = 0;
    CHECK_EQ(pthread_mutex_setprioceiling(&pm, 200, &old), 0);
    CHECK_EQ(old, 50);
    CHECK_EQ(pthread_mutex_getprioceiling(&pm, &v), 0);
    CHECK_EQ(v, 200);
    pthread_mutex_t no_ceiling = PTHREAD_MUTEX_INITIALIZER; /* PTHREAD_PRIO_NONE: no ceiling to get */
    CHECK_EQ(pthread_mutex_getprioceiling(&no_ceiling, &v), EINVAL);
    CHECK_EQ(pthread_mutex_lock(&pm), 0); /* main runs at 200 while it holds it */
    CHECK_EQ(pthread_mutex_setprioceiling(&pm, 0, NULL), EINVAL);
    CHECK_EQ(pthread_mutex_unlock(&pm), 0);
    CHECK_EQ(pthread_getschedparam(pthread_self(), &policy, &sp), 0);
    CHECK_EQ(sp.sched_priority, 128);
    CHECK_EQ(pthread_mutex_setprioceiling(&m1, 60, NULL), EINVAL); /* not PRIO_PROTECT */
    CHECK_EQ(pthread_mutex_setprioceiling(&pm, 50, NULL), 0);
    /* a (10) holds pm, b (20) waits for it, x (30) wakes while b holds it: "a b x B A" */
    log_len = 0;
    t_start = rt_time_now();
    pthread_t ha = spawn(handover_a, NULL, 10);
    (void)rt_sleep(RT_USEC(500));
    pthread_t hb = spawn(handover_b, NULL, 20);
    pthread_t hx = spawn(handover_x, NULL, 30);
    CHECK_EQ(pthread_join(hx, NULL), 0);
    CHECK_EQ(pthread_join(hb, NULL), 0);
    CHECK_EQ(pthread_join(ha, NULL), 0);
    CHECK_EQ(log_len, 5);
    CHECK(memcmp(log_, "abxBA", 5) == 0);
    /* c (10) holds pm (50) and pm2 (70), y is at 60: y runs between the two unlocks */
    CHECK_EQ(pthread_mutexattr_setprioceiling(&pp, 70), 0);
    CHECK_EQ(pthread_mutex_init(&pm2, &pp), 0);
    log_len = 0;
    t = spawn(nested_c, NULL, 10);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(log_len, 3);
    CHECK(memcmp(log_, "123", 3) == 0);
    CHECK_EQ(pthread_mutex_destroy(&pm2), 0);
    CHECK_EQ(pthread_mutex_destroy(&pm), 0);
    CHECK_EQ(pthread_mutexattr_destroy(&pp), 0);
    CHECK_EQ(pthread_mutex_destroy(&m1), 0);
    CHECK_EQ(pthread_mutex_destroy(&m2), 0);
    CHECK_EQ(pthread_mutex_destroy(&m3), 0);

    /* spin locks */
    CHECK_EQ(pthread_spin_init(&spin, 7), EINVAL);
    CHECK_EQ(pthread_spin_init(&spin, PTHREAD_PROCESS_SHARED), 0);
    CHECK_EQ(pthread_spin_destroy(&spin), 0);
    CHECK_EQ(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE), 0);
    CHECK_EQ(pthread_spin_lock(&spin), 0);
    CHECK_EQ(pthread_spin_lock(&spin), EDEADLK);
    CHECK_EQ(pthread_spin_destroy(&spin), EBUSY);
    t = spawn(spin_other_thread, NULL, 200);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(spin_other[0], EBUSY);
    CHECK_EQ(spin_other[1], EPERM);
    CHECK_EQ(pthread_spin_unlock(&spin), 0);
    CHECK_EQ(pthread_spin_trylock(&spin), 0);
    CHECK_EQ(pthread_spin_unlock(&spin), 0);
    /* a holder at 10 preempted by a waiter at 100: the waiter blocks, the holder finishes */
    t = spawn(spin_low, NULL, 10);
    while (!spin_holder_has_it) {
        (void)rt_sleep(RT_USEC(100));
    }
    pthread_t hi = spawn(spin_high, NULL, 100);
    CHECK_EQ(pthread_join(hi, NULL), 0);
    CHECK_EQ(spin_high_result, 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(pthread_spin_destroy(&spin), 0);
    CHECK_EQ(pthread_spin_lock(&spin), EINVAL);
    CHECK_EQ(pthread_spin_unlock(&spin), EINVAL);
    CHECK_EQ(pthread_spin_init(NULL, PTHREAD_PROCESS_PRIVATE), EINVAL);
    pthread_spinlock_t sc;
    CHECK_EQ(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE), 0);
    memcpy(&sc, &spin, sizeof(sc));
    CHECK_EQ(pthread_spin_lock(&sc), EINVAL);
    CHECK_EQ(pthread_spin_destroy(&spin), 0);

    /* the layer's cost over the rtos's own call, uncontended (guest ns; 1 instruction = 1 ns with
     * QEMU's icount) */
    pthread_mutex_t cm;
    static rt_mutex_t km;
    CHECK_EQ(pthread_mutex_init(&cm, NULL), 0);
    CHECK_EQ(rt_mutex_init(&km), 0);
    enum { N = 1000 };
    rt_time_t c0 = rt_time_now();
    for (int i = 0; i < N; i++) {
        (void)pthread_mutex_lock(&cm);
        (void)pthread_mutex_unlock(&cm);
    }
    rt_time_t c1 = rt_time_now();
    for (int i = 0; i < N; i++) {
        (void)rt_mutex_lock(&km, RT_FOREVER);
        (void)rt_mutex_unlock(&km);
    }
    rt_time_t c2 = rt_time_now();
    printf("mutex: lock+unlock %lu ns (rt_mutex_lock+unlock %lu ns)\n", (unsigned long)((c1 - c0) / N),
           (unsigned long)((c2 - c1) / N));
    CHECK_EQ(pthread_mutex_destroy(&cm), 0);

    POSIX_TEST_END("mutex");
}
