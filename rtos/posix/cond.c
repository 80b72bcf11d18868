/*
 * POSIX condition variables: a wait list (pthread_impl.h) under the layer's lock. A waiter puts itself
 * on the list, then releases the mutex, then blocks on its own flags: a signal given at any point after
 * it is on the list wakes it. Signals wake the most urgent waiter first, first come first among equals.
 * A woken thread never touches the condition variable again (it may be destroyed at once).
 *
 * pthread_cond_wait and pthread_cond_timedwait are cancellation points: a cancelled waiter relocks
 * the mutex before its cleanup handlers run, and a waiter that was both signalled and cancelled takes
 * the signal (returns 0) and acts on the cancel at its next cancellation point.
 */
#include <errno.h>

#include "posix.h"
#include "pthread_impl.h"

_Static_assert(sizeof(((pthread_cond_t *)0)->__waiters) >= sizeof(rt_list_t), "pthread_cond_t holds a list");

static void cond_setup(pthread_cond_t *c, clockid_t clock)
{
    c->__clock = (int)clock;
    c->__mutex = NULL;
    rt_list_init(POSIX_WAITERS(c));
}

/* Ready for use (PTHREAD_COND_INITIALIZER: set up at the first use), else EINVAL. */
static int cond_get(pthread_cond_t *c)
{
    if (c == NULL) {
        return EINVAL;
    }
    if (POSIX_LIVE(c, POSIX_MAGIC_COND)) {
        return 0;
    }
    if (__atomic_load_n(&c->__magic, __ATOMIC_ACQUIRE) != RTMUX_COND_STATIC) {
        return EINVAL;
    }
    posix_lock();
    if (c->__magic == RTMUX_COND_STATIC) {
        cond_setup(c, CLOCK_REALTIME);
        POSIX_SET_LIVE(c, POSIX_MAGIC_COND);
    }
    int ret = POSIX_LIVE(c, POSIX_MAGIC_COND) ? 0 : EINVAL;
    posix_unlock();
    return ret;
}

static int wait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
    int ret = cond_get(c);
    if (ret != 0) {
        return ret;
    }
    ret = posix_mutex_owned(m);
    if (ret != 0) {
        return ret;
    }
    rt_time_t deadline = RT_FOREVER;
    if (abstime != NULL) {
        rt_time_t timeout;
        ret = posix_abs_timeout((clockid_t)c->__clock, abstime, &timeout);
        if (ret != 0) {
            return ret;
        }
        deadline = posix_deadline(timeout);
    }
    posix_cancel_point();
    posix_lock();
    if (c->__mutex != NULL && c->__mutex != m) {
        posix_unlock();
        return EINVAL; /* every concurrent waiter must use the same mutex */
    }
    struct posix_waiter w;
    posix_wait_enqueue(POSIX_WAITERS(c), &w, 0);
    c->__mutex = m;
    posix_unlock();
    unsigned depth = posix_mutex_release(m);
    ret = posix_wait_sleep(&w, deadline, true);
    if (ret != 0) {
        posix_lock();
        if (posix_wait_leave(&w)) {
            ret = 0; /* signalled after all */
        } else if (rt_list_empty(POSIX_WAITERS(c))) {
            c->__mutex = NULL;
        }
        posix_unlock();
    }
    posix_mutex_reacquire(m, depth);
    if (ret == ECANCELED) {
        posix_cancel_point(); /* with the mutex held, as the standard wants for the cleanup handlers */
        ret = 0;
    }
    return ret;
}

int pthread_cond_wait(pthread_cond_t *restrict cond, pthread_mutex_t *restrict mutex)
{
    return wait(cond, mutex, NULL);
}

int pthread_cond_timedwait(pthread_cond_t *restrict cond, pthread_mutex_t *restrict mutex,
                           const struct timespec *restrict abstime)
{
    if (abstime == NULL) {
        return EINVAL;
    }
    return wait(cond, mutex, abstime);
}

static int wake(pthread_cond_t *c, bool all)
{
    int ret = cond_get(c);
    if (ret != 0) {
        return ret;
    }
    posix_lock();
    if (all) {
        posix_wait_wake_all(POSIX_WAITERS(c));
    } else {
        struct posix_waiter *w = posix_wait_first(POSIX_WAITERS(c));
        if (w != NULL) {
            posix_wait_wake(w);
        }
    }
    if (rt_list_empty(POSIX_WAITERS(c))) {
        c->__mutex = NULL;
    }
    posix_unlock();
    return 0;
}

int pthread_cond_signal(pthread_cond_t *cond)
{
    return wake(cond, false);
}

int pthread_cond_broadcast(pthread_cond_t *cond)
{
    return wake(cond, true);
}

int pthread_cond_init(pthread_cond_t *restrict cond, const pthread_condattr_t *restrict attr)
{
    if (cond == NULL || (attr != NULL && attr->__magic != POSIX_MAGIC_CONDA)) {
        return EINVAL;
    }
    posix_lock();
    if (POSIX_LIVE(cond, POSIX_MAGIC_COND) && !rt_list_empty(POSIX_WAITERS(cond))) {
        posix_unlock();
        return EBUSY;
    }
    cond_setup(cond, attr != NULL ? (clockid_t)attr->__clock : CLOCK_REALTIME);
    POSIX_SET_LIVE(cond, POSIX_MAGIC_COND);
    posix_unlock();
    return 0;
}

int pthread_cond_destroy(pthread_cond_t *cond)
{
    int ret = cond_get(cond);
    if (ret != 0) {
        return ret;
    }
    posix_lock();
    if (!rt_list_empty(POSIX_WAITERS(cond))) {
        ret = EBUSY;
    } else {
        cond->__magic = 0;
    }
    posix_unlock();
    return ret;
}

/* ---------------------------------------------------------------- attributes */

#define CATTR_OK(a) ((a) != NULL && (a)->__magic == POSIX_MAGIC_CONDA)

int pthread_condattr_init(pthread_condattr_t *attr)
{
    if (attr == NULL) {
        return EINVAL;
    }
    attr->__clock = (int)CLOCK_REALTIME;
    attr->__pshared = PTHREAD_PROCESS_PRIVATE;
    attr->__magic = POSIX_MAGIC_CONDA;
    return 0;
}

int pthread_condattr_destroy(pthread_condattr_t *attr)
{
    if (!CATTR_OK(attr)) {
        return EINVAL;
    }
    attr->__magic = 0;
    return 0;
}

int pthread_condattr_getclock(const pthread_condattr_t *restrict attr, clockid_t *restrict clock_id)
{
    if (!CATTR_OK(attr) || clock_id == NULL) {
        return EINVAL;
    }
    *clock_id = (clockid_t)attr->__clock;
    return 0;
}

int pthread_condattr_setclock(pthread_condattr_t *attr, clockid_t clock_id)
{
    /* The clocks a timed wait can follow; a CPU-time clock is refused, as the standard says. */
    if (!CATTR_OK(attr) || (clock_id != CLOCK_REALTIME && clock_id != CLOCK_MONOTONIC)) {
        return EINVAL;
    }
    attr->__clock = (int)clock_id;
    return 0;
}

int pthread_condattr_getpshared(const pthread_condattr_t *restrict attr, int *restrict pshared)
{
    if (!CATTR_OK(attr) || pshared == NULL) {
        return EINVAL;
    }
    *pshared = attr->__pshared;
    return 0;
}

int pthread_condattr_setpshared(pthread_condattr_t *attr, int pshared)
{
    /* One process (docs/posix.md): every object is shared by all its threads either way. */
    if (!CATTR_OK(attr) || (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)) {
        return EINVAL;
    }
    attr->__pshared = pshared;
    return 0;
}
