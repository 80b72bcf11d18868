/*
 * POSIX spin locks, which do not spin: on the rtos's one CPU a waiter spinning against a preempted
 * holder of lower priority would spin for ever. Each is an rtos mutex instead: a waiter blocks, and
 * lends its priority to the holder until it unlocks (docs/posix.md). Taking it uncontended costs one
 * kernel call, as an atomic would not, but never more than the mutex's.
 */
#include <errno.h>

#include "posix.h"
#include "pthread_impl.h"

_Static_assert(sizeof(((pthread_spinlock_t *)0)->__kobj) >= sizeof(rt_mutex_t),
               "pthread_spinlock_t holds an rt_mutex_t");

#define SPIN_OK(l) ((l) != NULL && POSIX_LIVE(l, POSIX_MAGIC_SPIN))

int pthread_spin_init(pthread_spinlock_t *lock, int pshared)
{
    /* One process (docs/posix.md): a lock is shared by all its threads either way. */
    if (lock == NULL || (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)) {
        return EINVAL;
    }
    if (SPIN_OK(lock) && rt_mutex_owner(POSIX_KMUTEX(lock)) != NULL) {
        return EBUSY;
    }
    (void)rt_mutex_init(POSIX_KMUTEX(lock));
    POSIX_SET_LIVE(lock, POSIX_MAGIC_SPIN);
    return 0;
}

int pthread_spin_destroy(pthread_spinlock_t *lock)
{
    if (!SPIN_OK(lock)) {
        return EINVAL;
    }
    if (rt_mutex_owner(POSIX_KMUTEX(lock)) != NULL) {
        return EBUSY;
    }
    lock->__magic = 0;
    return 0;
}

static int take(pthread_spinlock_t *lock, rt_time_t timeout)
{
    if (!SPIN_OK(lock)) {
        return EINVAL;
    }
    int rc = rt_mutex_lock(POSIX_KMUTEX(lock), timeout);
    if (rc == RT_EWOULDBLOCK) {
        return EBUSY;
    }
    return posix_errno(rc); /* RT_EDEADLK: the caller holds it already */
}

int pthread_spin_lock(pthread_spinlock_t *lock)
{
    return take(lock, RT_FOREVER);
}

int pthread_spin_trylock(pthread_spinlock_t *lock)
{
    return take(lock, RT_NO_WAIT);
}

int pthread_spin_unlock(pthread_spinlock_t *lock)
{
    if (!SPIN_OK(lock)) {
        return EINVAL;
    }
    return posix_errno(rt_mutex_unlock(POSIX_KMUTEX(lock))); /* EPERM: not the holder */
}
