/*
 * Per-process timers (<time.h>: timer_create, timer_settime, timer_gettime, timer_getoverrun,
 * timer_delete) on CLOCK_MONOTONIC and CLOCK_REALTIME, with SIGEV_NONE or SIGEV_THREAD notification.
 * There are no signals: SIGEV_SIGNAL, and a NULL sigevent (which means SIGEV_SIGNAL), give ENOTSUP.
 *
 * A SIGEV_THREAD timer has a thread of its own, created with it and ended by timer_delete: it waits
 * for the next expiration on the timer's `kick` semaphore with a timeout (timer_settime and
 * timer_delete give `kick` to make it look again) and calls the notification function itself, so no
 * timer work runs in an interrupt handler and the function runs at the thread's priority. Expiration
 * times are absolute (CLOCK_MONOTONIC ns) and a periodic timer's next one is the last plus the
 * interval, so a periodic timer does not drift however late its thread wakes. Expirations that pass
 * while a notification is pending or its function still runs are not notified: they are the next
 * notification's overrun count (timer_getoverrun), as POSIX counts signals still pending.
 *
 * timer_t (the C library's unsigned long) is a slot index (low 8 bits, plus one, so 0 is never a
 * timer) and the slot's generation (the bits above), so a deleted timer's id, or any other number, is
 * refused with EINVAL and never followed as a pointer. One rtos mutex guards the slots and every
 * timer's state; a notification function runs without it.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#if __has_include(<pthread.h>)
#include <pthread.h>
#endif

#include "posix.h"
#include "rtos/irq.h"
#include "rtos/sync.h"
#include "rtos/thread.h"
#include "rtos/time.h"

#define TIMER_SLOTS       64 /* timers at once (POSIX's TIMER_MAX; at least _POSIX_TIMER_MAX, 32) */
#define TIMER_STACK       16384u
#define TIMER_OVERRUN_MAX INT_MAX /* POSIX's DELAYTIMER_MAX */
#define TIMER_STACK_MIN   (RT_STACK_MIN + 2048u)

struct ptimer {
    clockid_t clock;
    int notify; /* SIGEV_NONE or SIGEV_THREAD */
    void (*fn)(union sigval);
    union sigval value;
    bool armed;
    bool deleting;      /* timer_delete was called: the thread ends */
    rt_time_t expiry;   /* next expiration, CLOCK_MONOTONIC ns, while armed */
    rt_time_t interval; /* ns; 0: one-shot */
    int overrun;        /* of the last notification */
    /* SIGEV_THREAD only */
    rt_sem_t kick;
    rt_thread_t thread;
    void *stack; /* from the heap, or NULL if the attributes gave one */
    struct ptimer *next_zombie;
};

static struct ptimer *slots[TIMER_SLOTS];
static unsigned long generation[TIMER_SLOTS];
static struct ptimer *zombies; /* deleted by their own notification: freed once their thread ended */
static rt_mutex_t lock;

__attribute__((constructor)) static void timers_init(void)
{
    (void)rt_mutex_init(&lock);
}

static void lock_timers(void)
{
    (void)rt_mutex_lock(&lock, RT_FOREVER);
}

static void unlock_timers(void)
{
    (void)rt_mutex_unlock(&lock);
}

static int fail(int err)
{
    errno = err;
    return -1;
}

/* Every call takes the timers' mutex: none is for interrupt handlers. */
static bool in_irq(void)
{
    if (rt_in_irq()) {
        errno = EPERM;
        return true;
    }
    return false;
}

/* The timer an id names, or NULL. Lock held. */
static struct ptimer *find(timer_t id)
{
    unsigned long slot = (id & 0xffu) - 1u;
    if (slot >= TIMER_SLOTS || slots[slot] == NULL || generation[slot] != (id >> 8)) {
        return NULL;
    }
    return slots[slot];
}

static void destroy(struct ptimer *t)
{
    free(t->stack);
    free(t);
}

/* Frees the timers whose threads have ended after deleting them. Lock held. */
static void reap(void)
{
    for (struct ptimer **pp = &zombies; *pp != NULL;) {
        struct ptimer *z = *pp;
        if (rt_thread_is_dead(&z->thread)) {
            *pp = z->next_zombie;
            destroy(z);
        } else {
            pp = &z->next_zombie;
        }
    }
}

/* The thread of a SIGEV_THREAD timer. */
static void notify_thread(void *arg)
{
    struct ptimer *t = arg;
    lock_timers();
    while (!t->deleting) {
        rt_time_t timeout = RT_FOREVER;
        if (t->armed) {
            rt_time_t now = rt_time_now();
            if (now >= t->expiry) {
                /* Expirations after t->expiry up to now were never notified: overruns. */
                uint64_t missed = 0;
                if (t->interval != 0) {
                    missed = (now - t->expiry) / t->interval;
                    rt_time_t step = (missed + 1u) * t->interval; /* <= now - expiry + interval */
                    t->expiry = t->expiry < RT_FOREVER - 1u - step ? t->expiry + step : RT_FOREVER - 1u;
                } else {
                    t->armed = false;
                }
                t->overrun = missed > TIMER_OVERRUN_MAX ? TIMER_OVERRUN_MAX : (int)missed;
                void (*fn)(union sigval) = t->fn;
                union sigval v = t->value;
                unlock_timers();
                fn(v);
                lock_timers();
                continue;
            }
            timeout = t->expiry - now;
        }
        unlock_timers();
        (void)rt_sem_take(&t->kick, timeout); /* a kick, or the expiration */
        lock_timers();
    }
    unlock_timers();
}

/* The priority and stack of a notification thread from sigev_notify_attributes (NULL: defaults). */
static int thread_attrs(const pthread_attr_t *a, unsigned *prio, size_t *size, void **stack)
{
    unsigned base = RT_PRIO_MIN;
    (void)rt_thread_get_priority(rt_thread_self(), &base, NULL);
    *prio = base; /* by default, the priority of the thread that creates the timer */
    *size = TIMER_STACK;
    *stack = NULL;
    if (a == NULL) {
        return 0;
    }
    if (!a->__initialized) {
        return EINVAL;
    }
#ifdef PTHREAD_EXPLICIT_SCHED
    bool explicit = a->__inheritsched == PTHREAD_EXPLICIT_SCHED;
#else
    bool explicit = a->__param.sched_priority != 0; /* without <pthread.h>: a priority given is used */
#endif
    if (explicit) {
        int p = a->__param.sched_priority;
        if (p < (int)RT_PRIO_MIN || p > (int)RT_PRIO_MAX) {
            return EINVAL;
        }
        *prio = (unsigned)p;
    }
    if (a->__stacksize != 0) {
        if (a->__stacksize < TIMER_STACK_MIN) {
            return EINVAL;
        }
        *size = a->__stacksize;
    } else if (a->__stackaddr != NULL) {
        return EINVAL; /* a stack of unknown size */
    }
    *stack = a->__stackaddr;
    return 0;
}

int timer_create(clockid_t clock, struct sigevent *restrict sevp, timer_t *restrict timerid)
{
    if (in_irq()) {
        return -1;
    }
    if (clock == CLOCK_THREAD_CPUTIME_ID || clock == CLOCK_PROCESS_CPUTIME_ID) {
        return fail(ENOTSUP); /* no timers on CPU-time clocks */
    }
    if (!posix_clock_waitable(clock) || timerid == NULL) {
        return fail(EINVAL);
    }
    if (sevp == NULL || sevp->sigev_notify == SIGEV_SIGNAL) {
        return fail(ENOTSUP); /* signals are not implemented (docs/posix.md) */
    }
    if (sevp->sigev_notify != SIGEV_NONE && sevp->sigev_notify != SIGEV_THREAD) {
        return fail(EINVAL);
    }
    unsigned prio = 0;
    size_t size = 0;
    void *given = NULL;
    if (sevp->sigev_notify == SIGEV_THREAD) {
        int err = sevp->sigev_notify_function == NULL
                      ? EINVAL
                      : thread_attrs(sevp->sigev_notify_attributes, &prio, &size, &given);
        if (err != 0) {
            return fail(err);
        }
    }
    struct ptimer *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        return fail(EAGAIN);
    }
    t->clock = clock;
    t->notify = sevp->sigev_notify;
    t->fn = sevp->sigev_notify_function;
    t->value = sevp->sigev_value;
    lock_timers();
    reap();
    unsigned slot = 0;
    while (slot < TIMER_SLOTS && slots[slot] != NULL) {
        slot++;
    }
    int err = slot == TIMER_SLOTS ? EAGAIN : 0;
    if (err == 0 && t->notify == SIGEV_THREAD) {
        (void)rt_sem_init(&t->kick, 0, 1);
        void *stack = given;
        if (stack == NULL) {
            size = (size + 15u) & ~(size_t)15u;
            stack = t->stack = aligned_alloc(16, size);
        }
        if (stack == NULL) {
            err = EAGAIN;
        } else if (rt_thread_create(&t->thread, "timer", notify_thread, t, stack, size, prio) != RT_OK) {
            err = EINVAL; /* a caller-given stack too small or misaligned */
        }
    }
    if (err != 0) {
        unlock_timers();
        destroy(t);
        return fail(err);
    }
    slots[slot] = t;
    *timerid = (timer_t)((generation[slot] << 8) | (slot + 1u));
    unlock_timers();
    return 0;
}

int timer_delete(timer_t id)
{
    if (in_irq()) {
        return -1;
    }
    lock_timers();
    struct ptimer *t = find(id);
    if (t == NULL) {
        unlock_timers();
        return fail(EINVAL);
    }
    unsigned long slot = (id & 0xffu) - 1u;
    slots[slot] = NULL;
    generation[slot] = (generation[slot] + 1u) & (ULONG_MAX >> 8); /* the old id is refused from now on */
    t->armed = false;
    t->deleting = true;
    bool own = t->notify == SIGEV_THREAD && rt_thread_self() == &t->thread;
    if (own) {
        /* Deleted by its own notification: its thread ends when the function returns, and a later
         * timer_create or timer_delete frees it. */
        t->next_zombie = zombies;
        zombies = t;
    }
    if (t->notify == SIGEV_THREAD) {
        (void)rt_sem_give(&t->kick);
    }
    reap();
    unlock_timers();
    if (t->notify == SIGEV_THREAD && !own) {
        /* A notification in progress finishes first. */
        (void)rt_thread_join(&t->thread, RT_FOREVER);
    }
    if (!own) {
        destroy(t);
    }
    return 0;
}

/* The time to t's next expiration as of now (0: disarmed), and its interval. Lock held. */
static struct itimerspec remaining(const struct ptimer *t)
{
    struct itimerspec v = {.it_interval = posix_ns_timespec(t->interval)};
    if (!t->armed) {
        return v;
    }
    rt_time_t now = rt_time_now(), left = 0;
    if (t->expiry > now) {
        left = t->expiry - now;
    } else if (t->interval != 0) {
        /* Passed, not yet notified (or SIGEV_NONE): the next expiration still to come. */
        left = t->interval - (now - t->expiry) % t->interval;
    }
    v.it_value = posix_ns_timespec(left);
    return v;
}

int timer_gettime(timer_t id, struct itimerspec *value)
{
    if (in_irq()) {
        return -1;
    }
    lock_timers();
    struct ptimer *t = find(id);
    if (t != NULL && value != NULL) {
        *value = remaining(t);
    }
    unlock_timers();
    return t == NULL || value == NULL ? fail(EINVAL) : 0;
}

int timer_settime(timer_t id, int flags, const struct itimerspec *restrict value,
                  struct itimerspec *restrict ovalue)
{
    if (in_irq()) {
        return -1;
    }
    if (value == NULL) {
        return fail(EINVAL);
    }
    /* An absolute it_value before the Epoch has passed: it expires at once. */
    bool disarm = value->it_value.tv_sec == 0 && value->it_value.tv_nsec == 0;
    bool abs = (flags & TIMER_ABSTIME) != 0;
    bool value_ok = abs ? posix_abstime_valid(&value->it_value) : posix_timespec_valid(&value->it_value);
    if (!disarm && (!value_ok || !posix_timespec_valid(&value->it_interval))) {
        return fail(EINVAL);
    }
    lock_timers();
    struct ptimer *t = find(id);
    if (t == NULL) {
        unlock_timers();
        return fail(EINVAL);
    }
    if (ovalue != NULL) {
        *ovalue = remaining(t);
    }
    t->armed = false;
    if (!disarm) {
        rt_time_t now = rt_time_now();
        rt_time_t v = abs ? posix_abstime_ns(&value->it_value) : posix_timespec_ns(&value->it_value);
        if (!abs) {
            t->expiry = v < RT_FOREVER - 1u - now ? now + v : RT_FOREVER - 1u;
        } else if (t->clock == CLOCK_MONOTONIC) {
            t->expiry = v;
        } else {
            /* CLOCK_REALTIME: the monotonic time it reaches v at, as of now (docs/posix.md). */
            rt_time_t wait = 0;
            (void)posix_abs_timeout(CLOCK_REALTIME, &value->it_value, &wait);
            t->expiry = now + wait;
        }
        t->interval = posix_timespec_ns(&value->it_interval);
        t->overrun = 0;
        t->armed = true;
    } else {
        t->interval = 0;
    }
    if (t->notify == SIGEV_THREAD) {
        (void)rt_sem_give(&t->kick); /* RT_EOVERFLOW: already kicked */
    }
    unlock_timers();
    return 0;
}

int timer_getoverrun(timer_t id)
{
    if (in_irq()) {
        return -1;
    }
    lock_timers();
    struct ptimer *t = find(id);
    int n = t != NULL ? t->overrun : 0;
    unlock_timers();
    return t == NULL ? fail(EINVAL) : n;
}
