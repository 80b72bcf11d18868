/*
 * POSIX read-write locks: state and wait list under the layer's lock, with direct hand-over (a woken
 * waiter already holds what it waited for).
 *
 * Who gets the lock is the standard's rule for SCHED_FIFO/SCHED_RR threads: a reader gets it unless a
 * writer holds it or a writer of the same or higher priority waits; on release the most urgent waiter
 * goes first, a writer before readers of its own priority, and every reader ahead of the first writer
 * that cannot have it yet comes along. So writers are preferred among equals, and a reader of higher
 * priority than every waiting writer still overtakes them.
 *
 * A thread's read locks are counted in its control block (POSIX_RDLOCKS_MAX distinct locks at once;
 * more gives EAGAIN): a thread that holds a read lock gets another at once (the standard's recursive
 * read lock, which a waiting writer must not block), and unlocking knows what the caller holds (EPERM
 * otherwise). No priority inheritance: a read lock has no single owner to lend to (docs/posix.md).
 */
#include <errno.h>
#include <limits.h>

#include "posix.h"
#include "pthread_impl.h"
#include "rtos/thread.h"

_Static_assert(sizeof(((pthread_rwlock_t *)0)->__waiters) >= sizeof(rt_list_t),
               "pthread_rwlock_t holds a list");

enum { READER = 0, WRITER = 1 };

static int rwlock_get(pthread_rwlock_t *rw)
{
    if (rw == NULL) {
        return EINVAL;
    }
    if (POSIX_LIVE(rw, POSIX_MAGIC_RWLOCK)) {
        return 0;
    }
    if (__atomic_load_n(&rw->__magic, __ATOMIC_ACQUIRE) != RTMUX_RWLOCK_STATIC) {
        return EINVAL;
    }
    posix_lock();
    if (rw->__magic == RTMUX_RWLOCK_STATIC) {
        rw->__readers = 0;
        rw->__writer = NULL;
        rt_list_init(POSIX_WAITERS(rw));
        POSIX_SET_LIVE(rw, POSIX_MAGIC_RWLOCK);
    }
    int ret = POSIX_LIVE(rw, POSIX_MAGIC_RWLOCK) ? 0 : EINVAL;
    posix_unlock();
    return ret;
}

/* The caller's entry for rw in its read-lock table, or NULL. */
static unsigned *held(struct rtmux_pthread *self, const pthread_rwlock_t *rw)
{
    for (unsigned i = 0; i < POSIX_RDLOCKS_MAX; i++) {
        if (self->rdlocks[i].lock == rw && self->rdlocks[i].count != 0) {
            return &self->rdlocks[i].count;
        }
    }
    return NULL;
}

static unsigned *free_slot(struct rtmux_pthread *self, const pthread_rwlock_t *rw)
{
    for (unsigned i = 0; i < POSIX_RDLOCKS_MAX; i++) {
        if (self->rdlocks[i].count == 0) {
            self->rdlocks[i].lock = rw;
            return &self->rdlocks[i].count;
        }
    }
    return NULL;
}

/* Under posix_lock: whether a writer of priority >= prio waits (the list is in priority order). */
static bool writer_waits(pthread_rwlock_t *rw, unsigned prio)
{
    rt_list_t *q = POSIX_WAITERS(rw);
    for (rt_list_t *n = q->next; n != q; n = n->next) {
        struct posix_waiter *w = RT_CONTAINER_OF(n, struct posix_waiter, node);
        if (w->prio < prio) {
            return false;
        }
        if (w->kind == WRITER) {
            return true;
        }
    }
    return false;
}

/* Under posix_lock: hands the lock to the waiters that may have it now. */
static void grant(pthread_rwlock_t *rw)
{
    rt_list_t *q = POSIX_WAITERS(rw);
    while (!rt_list_empty(q)) {
        struct posix_waiter *best = RT_CONTAINER_OF(q->next, struct posix_waiter, node);
        /* A writer of the first waiter's priority goes before the readers of that priority. */
        for (rt_list_t *n = q->next; n != q; n = n->next) {
            struct posix_waiter *w = RT_CONTAINER_OF(n, struct posix_waiter, node);
            if (w->prio != best->prio) {
                break;
            }
            if (w->kind == WRITER) {
                best = w;
                break;
            }
        }
        if (best->kind == WRITER) {
            if (rw->__writer == NULL && rw->__readers == 0) {
                rw->__writer = best->thread->rt;
                posix_wait_wake(best);
            }
            return;
        }
        if (rw->__writer != NULL) {
            return;
        }
        rw->__readers++;
        posix_wait_wake(best);
    }
}

enum mode { TRY, WAIT, TIMED };

/* Blocks the caller (on the list, under posix_lock, which it releases and takes again) until granted,
 * timed out or: returns 0 or ETIMEDOUT. */
static int block(pthread_rwlock_t *rw, int kind, enum mode mode, const struct timespec *abstime)
{
    rt_time_t deadline = RT_FOREVER;
    if (mode == TIMED) {
        rt_time_t timeout;
        int ret = posix_abs_timeout(CLOCK_REALTIME, abstime, &timeout);
        if (ret != 0) {
            return ret;
        }
        deadline = posix_deadline(timeout);
    }
    struct posix_waiter w;
    posix_wait_enqueue(POSIX_WAITERS(rw), &w, kind);
    posix_unlock();
    int ret = posix_wait_sleep(&w, deadline, false);
    posix_lock();
    if (ret != 0) {
        if (posix_wait_leave(&w)) {
            ret = 0; /* granted after all */
        } else {
            grant(rw); /* a writer that gives up may let readers behind it in */
        }
    }
    return ret;
}

static int rdlock(pthread_rwlock_t *rw, enum mode mode, const struct timespec *abstime)
{
    int ret = rwlock_get(rw);
    if (ret != 0) {
        return ret;
    }
    struct rtmux_pthread *self = posix_self();
    posix_lock();
    unsigned *count = held(self, rw);
    if (count != NULL) {
        if (*count == UINT_MAX || rw->__readers == UINT_MAX) {
            ret = EAGAIN;
        } else {
            (*count)++;
            rw->__readers++;
        }
        posix_unlock();
        return ret;
    }
    if (rw->__writer == self->rt) {
        posix_unlock();
        return EDEADLK;
    }
    count = free_slot(self, rw);
    if (count == NULL || rw->__readers == UINT_MAX) {
        posix_unlock();
        return EAGAIN;
    }
    unsigned eff = RT_PRIO_MIN;
    (void)rt_thread_get_priority(self->rt, NULL, &eff);
    if (rw->__writer == NULL && !writer_waits(rw, eff)) {
        rw->__readers++;
    } else if (mode == TRY) {
        ret = EBUSY;
    } else {
        ret = block(rw, READER, mode, abstime);
    }
    if (ret == 0) {
        *count = 1;
    }
    posix_unlock();
    return ret;
}

static int wrlock(pthread_rwlock_t *rw, enum mode mode, const struct timespec *abstime)
{
    int ret = rwlock_get(rw);
    if (ret != 0) {
        return ret;
    }
    struct rtmux_pthread *self = posix_self();
    posix_lock();
    if (rw->__writer == self->rt || held(self, rw) != NULL) {
        ret = EDEADLK;
    } else if (rw->__writer == NULL && rw->__readers == 0) {
        rw->__writer = self->rt;
    } else if (mode == TRY) {
        ret = EBUSY;
    } else {
        ret = block(rw, WRITER, mode, abstime);
    }
    posix_unlock();
    return ret;
}

int pthread_rwlock_rdlock(pthread_rwlock_t *rwlock)
{
    return rdlock(rwlock, WAIT, NULL);
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *rwlock)
{
    return rdlock(rwlock, TRY, NULL);
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *restrict rwlock, const struct timespec *restrict abstime)
{
    return rdlock(rwlock, TIMED, abstime);
}

int pthread_rwlock_wrlock(pthread_rwlock_t *rwlock)
{
    return wrlock(rwlock, WAIT, NULL);
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *rwlock)
{
    return wrlock(rwlock, TRY, NULL);
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *restrict rwlock, const struct timespec *restrict abstime)
{
    return wrlock(rwlock, TIMED, abstime);
}

int pthread_rwlock_unlock(pthread_rwlock_t *rwlock)
{
    int ret = rwlock_get(rwlock);
    if (ret != 0) {
        return ret;
    }
    struct rtmux_pthread *self = posix_self();
    posix_lock();
    unsigned *count;
    if (rwlock->__writer == self->rt) {
        rwlock->__writer = NULL;
    } else if ((count = held(self, rwlock)) != NULL) {
        (*count)--;
        rwlock->__readers--;
    } else {
        ret = EPERM;
    }
    if (ret == 0) {
        grant(rwlock);
    }
    posix_unlock();
    return ret;
}

int pthread_rwlock_init(pthread_rwlock_t *restrict rwlock, const pthread_rwlockattr_t *restrict attr)
{
    if (rwlock == NULL || (attr != NULL && attr->__magic != POSIX_MAGIC_RWLOCKA)) {
        return EINVAL;
    }
    posix_lock();
    if (POSIX_LIVE(rwlock, POSIX_MAGIC_RWLOCK) &&
        (rwlock->__readers != 0 || rwlock->__writer != NULL || !rt_list_empty(POSIX_WAITERS(rwlock)))) {
        posix_unlock();
        return EBUSY;
    }
    rwlock->__readers = 0;
    rwlock->__writer = NULL;
    rt_list_init(POSIX_WAITERS(rwlock));
    POSIX_SET_LIVE(rwlock, POSIX_MAGIC_RWLOCK);
    posix_unlock();
    return 0;
}

int pthread_rwlock_destroy(pthread_rwlock_t *rwlock)
{
    int ret = rwlock_get(rwlock);
    if (ret != 0) {
        return ret;
    }
    posix_lock();
    if (rwlock->__readers != 0 || rwlock->__writer != NULL || !rt_list_empty(POSIX_WAITERS(rwlock))) {
        ret = EBUSY;
    } else {
        rwlock->__magic = 0;
    }
    posix_unlock();
    return ret;
}

#define RWATTR_OK(a) ((a) != NULL && (a)->__magic == POSIX_MAGIC_RWLOCKA)

int pthread_rwlockattr_init(pthread_rwlockattr_t *attr)
{
    if (attr == NULL) {
        return EINVAL;
    }
    attr->__pshared = PTHREAD_PROCESS_PRIVATE;
    attr->__magic = POSIX_MAGIC_RWLOCKA;
    return 0;
}

int pthread_rwlockattr_destroy(pthread_rwlockattr_t *attr)
{
    if (!RWATTR_OK(attr)) {
        return EINVAL;
    }
    attr->__magic = 0;
    return 0;
}

int pthread_rwlockattr_getpshared(const pthread_rwlockattr_t *restrict attr, int *restrict pshared)
{
    if (!RWATTR_OK(attr) || pshared == NULL) {
        return EINVAL;
    }
    *pshared = attr->__pshared;
    return 0;
}

int pthread_rwlockattr_setpshared(pthread_rwlockattr_t *attr, int pshared)
{
    /* One process (docs/posix.md): every object is shared by all its threads either way. */
    if (!RWATTR_OK(attr) || (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)) {
        return EINVAL;
    }
    attr->__pshared = pshared;
    return 0;
}
