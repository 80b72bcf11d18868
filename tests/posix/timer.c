/*
 * Timers: SIGEV_NONE read back with timer_gettime, SIGEV_THREAD one-shot and periodic (counts and
 * times of the notifications), overruns while the notification function blocks longer than the
 * period, the notification thread's attributes, deletion (also from the notification itself), the
 * table's limit, and every EINVAL/ENOTSUP path.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#if __has_include(<pthread.h>)
#include <pthread.h>
#endif

#include "check.h"
#include "rtos/thread.h"

#define MS      1000000LL
#define LATE_NS 50000LL /* icount: a notification's instructions after its expiration, far below */

static long long ns_of(clockid_t clk)
{
    struct timespec ts;
    (void)clock_gettime(clk, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct timespec ts_of(long long ns)
{
    return (struct timespec){.tv_sec = (time_t)(ns / 1000000000LL), .tv_nsec = (long)(ns % 1000000000LL)};
}

static long long ts_ns(struct timespec ts)
{
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void msleep(long long ms)
{
    struct timespec ts = ts_of(ms * MS);
    (void)nanosleep(&ts, NULL);
}

static struct itimerspec its(long long value, long long interval)
{
    return (struct itimerspec){.it_value = ts_of(value), .it_interval = ts_of(interval)};
}

/* ---- notification functions ---- */
static volatile int count;
static volatile long long when[256];
static volatile int overruns_sum, overrun_max;
static volatile unsigned notify_prio;
static timer_t self_timer;
static volatile int self_delete_rc = 99;

static void record(union sigval v)
{
    (void)v;
    if (count < 256) {
        when[count] = ns_of(CLOCK_MONOTONIC);
    }
    count++;
}

static timer_t slow_timer;
static volatile long long slow_last;

static void slow(union sigval v)
{
    slow_last = ns_of(CLOCK_MONOTONIC);
    int o = timer_getoverrun(slow_timer);
    overruns_sum += o;
    if (o > overrun_max) {
        overrun_max = o;
    }
    count++;
    msleep(v.sival_int); /* longer than the period */
}

static void which_prio(union sigval v)
{
    (void)v;
    unsigned base = 0;
    (void)rt_thread_get_priority(rt_thread_self(), &base, NULL);
    notify_prio = base;
    count++;
}

static void delete_self(union sigval v)
{
    (void)v;
    count++;
    self_delete_rc = timer_delete(self_timer);
}

static struct sigevent thread_event(void (*fn)(union sigval), int value)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof(ev));
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = fn;
    ev.sigev_value.sival_int = value;
    return ev;
}

static void test_errors(void)
{
    struct sigevent none = {.sigev_notify = SIGEV_NONE};
    timer_t t;
    errno = 0;
    CHECK_EQ(timer_create((clockid_t)99, &none, &t), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(timer_create(CLOCK_THREAD_CPUTIME_ID, &none, &t), -1);
    CHECK_EQ(errno, ENOTSUP);
    errno = 0;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, NULL, &t), -1); /* NULL: SIGEV_SIGNAL */
    CHECK_EQ(errno, ENOTSUP);
    struct sigevent sig = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
    errno = 0;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &sig, &t), -1);
    CHECK_EQ(errno, ENOTSUP);
    struct sigevent odd = {.sigev_notify = 42};
    errno = 0;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &odd, &t), -1);
    CHECK_EQ(errno, EINVAL);
    struct sigevent nofn = thread_event(NULL, 0);
    errno = 0;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &nofn, &t), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &none, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    pthread_attr_t attr;
    memset(&attr, 0, sizeof(attr)); /* never initialised */
    struct sigevent ev = thread_event(record, 0);
    ev.sigev_notify_attributes = &attr;
    errno = 0;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &t), -1);
    CHECK_EQ(errno, EINVAL);
    attr.__initialized = 1;
    attr.__stacksize = 100; /* too small */
    errno = 0;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &t), -1);
    CHECK_EQ(errno, EINVAL);

    /* Ids that name no timer: never made, made up, deleted. */
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &none, &t), 0);
    struct itimerspec v = its(MS, 0), o;
    static const timer_t bogus[] = {0, 12345, ~(timer_t)0};
    for (unsigned i = 0; i < 3; i++) {
        errno = 0;
        CHECK_EQ(timer_settime(bogus[i], 0, &v, NULL), -1);
        CHECK_EQ(errno, EINVAL);
        errno = 0;
        CHECK_EQ(timer_gettime(bogus[i], &o), -1);
        CHECK_EQ(errno, EINVAL);
        errno = 0;
        CHECK_EQ(timer_getoverrun(bogus[i]), -1);
        CHECK_EQ(errno, EINVAL);
        errno = 0;
        CHECK_EQ(timer_delete(bogus[i]), -1);
        CHECK_EQ(errno, EINVAL);
    }
    /* An absolute time before the Epoch has passed: the timer expires at once (not EINVAL). */
    struct itimerspec past = {.it_value = {-5, 0}};
    CHECK_EQ(timer_settime(t, TIMER_ABSTIME, &past, NULL), 0);
    CHECK_EQ(timer_gettime(t, &o), 0);
    CHECK(o.it_value.tv_sec == 0 && o.it_value.tv_nsec == 0);
    /* Bad values. */
    errno = 0;
    CHECK_EQ(timer_settime(t, 0, NULL, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    static const struct itimerspec badv[] = {
        {.it_value = {0, -1}},
        {.it_value = {0, 1000000000L}},
        {.it_value = {-1, 0}},
        {.it_value = {1, 0}, .it_interval = {0, 1000000000L}},
        {.it_value = {1, 0}, .it_interval = {-1, 0}},
    };
    for (unsigned i = 0; i < 5; i++) {
        errno = 0;
        CHECK_EQ(timer_settime(t, 0, &badv[i], NULL), -1);
        CHECK_EQ(errno, EINVAL);
    }
    /* A zero it_value disarms whatever the interval says. */
    struct itimerspec off = {.it_value = {0, 0}, .it_interval = {0, 1000000000L}};
    CHECK_EQ(timer_settime(t, 0, &off, NULL), 0);
    errno = 0;
    CHECK_EQ(timer_gettime(t, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(timer_delete(t), 0);
    errno = 0;
    CHECK_EQ(timer_delete(t), -1); /* deleted: its id is refused */
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(timer_gettime(t, &o), -1);
    CHECK_EQ(errno, EINVAL);
}

static void test_none(void)
{
    struct sigevent none = {.sigev_notify = SIGEV_NONE};
    timer_t t;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &none, &t), 0);
    struct itimerspec v = its(50 * MS, 0), o;
    CHECK_EQ(timer_gettime(t, &o), 0); /* never armed */
    CHECK(ts_ns(o.it_value) == 0 && ts_ns(o.it_interval) == 0);
    CHECK_EQ(timer_settime(t, 0, &v, NULL), 0);
    CHECK_EQ(timer_gettime(t, &o), 0);
    CHECK(ts_ns(o.it_value) <= 50 * MS && ts_ns(o.it_value) > 49 * MS);
    msleep(20);
    CHECK_EQ(timer_gettime(t, &o), 0);
    CHECK(ts_ns(o.it_value) <= 30 * MS && ts_ns(o.it_value) > 29 * MS);
    /* Rearmed periodic; ovalue gives what was left of the one-shot. */
    v = its(10 * MS, 10 * MS);
    struct itimerspec old;
    CHECK_EQ(timer_settime(t, 0, &v, &old), 0);
    CHECK(ts_ns(old.it_value) <= 30 * MS && ts_ns(old.it_value) > 29 * MS && ts_ns(old.it_interval) == 0);
    msleep(25); /* 5 ms before the third expiration */
    CHECK_EQ(timer_gettime(t, &o), 0);
    CHECK(ts_ns(o.it_value) <= 5 * MS && ts_ns(o.it_value) > 4 * MS);
    CHECK_EQ(ts_ns(o.it_interval), 10 * MS);
    CHECK_EQ(timer_getoverrun(t), 0);
    /* One-shot that has expired: disarmed. */
    v = its(MS, 0);
    CHECK_EQ(timer_settime(t, 0, &v, NULL), 0);
    msleep(2);
    CHECK_EQ(timer_gettime(t, &o), 0);
    CHECK(ts_ns(o.it_value) == 0);
    /* Absolute, on the monotonic clock. */
    v = its(ns_of(CLOCK_MONOTONIC) + 30 * MS, 0);
    CHECK_EQ(timer_settime(t, TIMER_ABSTIME, &v, NULL), 0);
    CHECK_EQ(timer_gettime(t, &o), 0);
    CHECK(ts_ns(o.it_value) <= 30 * MS && ts_ns(o.it_value) > 29 * MS);
    /* Disarmed. */
    v = its(0, 0);
    CHECK_EQ(timer_settime(t, 0, &v, &old), 0);
    CHECK(ts_ns(old.it_value) > 29 * MS);
    CHECK_EQ(timer_gettime(t, &o), 0);
    CHECK(ts_ns(o.it_value) == 0);
    CHECK_EQ(timer_delete(t), 0);
}

static void test_thread(void)
{
    /* One-shot: one notification, at or just after its expiration. */
    struct sigevent ev = thread_event(record, 0);
    timer_t t;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &t), 0);
    count = 0;
    long long t0 = ns_of(CLOCK_MONOTONIC);
    struct itimerspec v = its(5 * MS, 0), o;
    CHECK_EQ(timer_settime(t, 0, &v, NULL), 0);
    msleep(20);
    CHECK_EQ(count, 1);
    CHECK(when[0] >= t0 + 5 * MS && when[0] < t0 + 5 * MS + LATE_NS);
    CHECK_EQ(timer_gettime(t, &o), 0);
    CHECK(ts_ns(o.it_value) == 0);

    /* Periodic, absolute start: the k-th notification right after start + k * period, no drift. */
    count = 0;
    long long start = ns_of(CLOCK_MONOTONIC) + 2 * MS;
    v = its(start, 2 * MS);
    CHECK_EQ(timer_settime(t, TIMER_ABSTIME, &v, NULL), 0);
    msleep(2 + 2 * 99 + 1); /* expirations 0..99 */
    v = its(0, 0);
    CHECK_EQ(timer_settime(t, 0, &v, NULL), 0);
    CHECK_EQ(count, 100);
    int bad = 0;
    for (int k = 0; k < 100; k++) {
        long long e = start + k * 2 * MS;
        bad += when[k] < e || when[k] >= e + LATE_NS;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(timer_getoverrun(t), 0);
    msleep(10);
    CHECK_EQ(count, 100); /* disarmed: no more */

    /* Rearming from the caller while a wait is in progress: the new time counts. */
    count = 0;
    v = its(50 * MS, 0);
    CHECK_EQ(timer_settime(t, 0, &v, NULL), 0);
    t0 = ns_of(CLOCK_MONOTONIC);
    v = its(3 * MS, 0);
    CHECK_EQ(timer_settime(t, 0, &v, NULL), 0);
    msleep(5);
    CHECK_EQ(count, 1);
    CHECK(when[0] >= t0 + 3 * MS && when[0] < t0 + 3 * MS + LATE_NS);
    CHECK_EQ(timer_delete(t), 0);

    /* CLOCK_REALTIME, absolute, after a step of the clock. */
    struct timespec set = {.tv_sec = 1000000, .tv_nsec = 0};
    CHECK_EQ(clock_settime(CLOCK_REALTIME, &set), 0);
    CHECK_EQ(timer_create(CLOCK_REALTIME, &ev, &t), 0);
    count = 0;
    t0 = ns_of(CLOCK_MONOTONIC);
    v = its(1000000LL * 1000000000LL + 4 * MS, 0);
    CHECK_EQ(timer_settime(t, TIMER_ABSTIME, &v, NULL), 0);
    msleep(10);
    CHECK_EQ(count, 1);
    CHECK(ns_of(CLOCK_REALTIME) >= 1000000LL * 1000000000LL + 4 * MS);
    CHECK(when[0] >= t0 + 3 * MS && when[0] < t0 + 4 * MS + LATE_NS);
    CHECK_EQ(timer_delete(t), 0);
}

/* A notification that sleeps 5 ms on a 2 ms timer: every expiration is either notified or counted
 * as an overrun of the next notification. */
static void test_overrun(void)
{
    struct sigevent ev = thread_event(slow, 5);
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &slow_timer), 0);
    count = 0;
    overruns_sum = 0;
    overrun_max = 0;
    long long start = ns_of(CLOCK_MONOTONIC) + MS;
    struct itimerspec v = its(start, 2 * MS);
    CHECK_EQ(timer_settime(slow_timer, TIMER_ABSTIME, &v, NULL), 0);
    /* Expirations at start + 2k ms for k = 0..49 (the 50th is at start + 98 ms). */
    struct timespec until = ts_of(start + 99 * MS);
    CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL), 0);
    v = its(0, 0);
    CHECK_EQ(timer_settime(slow_timer, 0, &v, NULL), 0);
    msleep(10); /* the last function returns */
    printf("overrun: %d notifications, %d overruns, at most %d at once\n", count, overruns_sum, overrun_max);
    CHECK(count >= 19 && count <= 21);           /* one per 5 ms */
    CHECK(overrun_max >= 1 && overrun_max <= 2); /* 2.5 expirations per notification */
    /* Every expiration up to the last notification was notified or counted as an overrun, none twice
     * (those after it, while its function ran, went with the disarm). */
    CHECK_EQ(count + overruns_sum, (slow_last - start) / (2 * MS) + 1);
    CHECK_EQ(timer_delete(slow_timer), 0);
}

static void test_attrs_and_delete(void)
{
    /* The notification thread's priority from its attributes. */
    pthread_attr_t attr;
    memset(&attr, 0, sizeof(attr));
    attr.__initialized = 1;
#ifdef PTHREAD_EXPLICIT_SCHED
    attr.__inheritsched = PTHREAD_EXPLICIT_SCHED;
#endif
    attr.__param.sched_priority = 200;
    attr.__stacksize = 8192;
    struct sigevent ev = thread_event(which_prio, 0);
    ev.sigev_notify_attributes = &attr;
    timer_t t;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &t), 0);
    count = 0;
    struct itimerspec v = its(MS, 0);
    CHECK_EQ(timer_settime(t, 0, &v, NULL), 0);
    msleep(3);
    CHECK_EQ(count, 1);
    CHECK_EQ(notify_prio, 200);
    CHECK_EQ(timer_delete(t), 0);
    attr.__param.sched_priority = 300;
    errno = 0;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &t), -1);
    CHECK_EQ(errno, EINVAL);
    /* Defaults: the creator's priority. */
    ev.sigev_notify_attributes = NULL;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &t), 0);
    count = 0;
    CHECK_EQ(timer_settime(t, 0, &v, NULL), 0);
    msleep(3);
    CHECK_EQ(count, 1);
    unsigned mine = 0;
    (void)rt_thread_get_priority(rt_thread_self(), &mine, NULL);
    CHECK_EQ(notify_prio, mine);
    CHECK_EQ(timer_delete(t), 0);

    /* Deleted by its own notification (periodic: it would fire again). */
    ev = thread_event(delete_self, 0);
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &self_timer), 0);
    count = 0;
    v = its(MS, MS);
    CHECK_EQ(timer_settime(self_timer, 0, &v, NULL), 0);
    msleep(10);
    CHECK_EQ(count, 1);
    CHECK_EQ(self_delete_rc, 0);
    errno = 0;
    CHECK_EQ(timer_gettime(self_timer, &v), -1);
    CHECK_EQ(errno, EINVAL);

    /* The table's limit: EAGAIN once every slot is taken (64), each usable again after a delete. */
    static timer_t many[70];
    struct sigevent none = {.sigev_notify = SIGEV_NONE};
    int made = 0;
    while (made < 70 && timer_create(CLOCK_MONOTONIC, &none, &many[made]) == 0) {
        made++;
    }
    CHECK_EQ(made, 64);
    CHECK_EQ(errno, EAGAIN);
    for (int i = 0; i < made; i++) {
        CHECK_EQ(timer_delete(many[i]), 0);
    }
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &none, &t), 0);
    CHECK(t != many[0]); /* the slot's old id stays refused */
    CHECK_EQ(timer_delete(many[0]), -1);
    CHECK_EQ(timer_delete(t), 0);
}

int main(void)
{
    test_errors();
    test_none();
    test_thread();
    test_overrun();
    test_attrs_and_delete();
    POSIX_TEST_END("timer");
}
