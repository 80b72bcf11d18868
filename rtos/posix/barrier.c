/*
 * POSIX barriers: a count and a wait list under the layer's lock. The thread that completes a round
 * wakes the others, resets the count for the next round and returns PTHREAD_BARRIER_SERIAL_THREAD;
 * the woken ones return 0 without touching the barrier again, so the next round may start (or the
 * barrier be destroyed) while they are still on their way out. Not a cancellation point.
 */
#include <errno.h>

#include "posix.h"
#include "pthread_impl.h"

_Static_assert(sizeof(((pthread_barrier_t *)0)->__waiters) >= sizeof(rt_list_t),
               "pthread_barrier_t holds a list");

#define BARRIER_OK(b) ((b) != NULL && POSIX_LIVE(b, POSIX_MAGIC_BARRIER))

int pthread_barrier_init(pthread_barrier_t *restrict barrier, const pthread_barrierattr_t *restrict attr,
                         unsigned count)
{
    if (barrier == NULL || count == 0 || (attr != NULL && attr->__magic != POSIX_MAGIC_BARRA)) {
        return EINVAL;
    }
    posix_lock();
    if (POSIX_LIVE(barrier, POSIX_MAGIC_BARRIER) && barrier->__arrived != 0) {
        posix_unlock();
        return EBUSY;
    }
    barrier->__count = count;
    barrier->__arrived = 0;
    rt_list_init(POSIX_WAITERS(barrier));
    POSIX_SET_LIVE(barrier, POSIX_MAGIC_BARRIER);
    posix_unlock();
    return 0;
}

int pthread_barrier_destroy(pthread_barrier_t *barrier)
{
    if (!BARRIER_OK(barrier)) {
        return EINVAL;
    }
    int ret = 0;
    posix_lock();
    if (barrier->__arrived != 0) {
        ret = EBUSY;
    } else {
        barrier->__magic = 0;
    }
    posix_unlock();
    return ret;
}

int pthread_barrier_wait(pthread_barrier_t *barrier)
{
    if (!BARRIER_OK(barrier)) {
        return EINVAL;
    }
    posix_lock();
    if (++barrier->__arrived == barrier->__count) {
        barrier->__arrived = 0;
        posix_wait_wake_all(POSIX_WAITERS(barrier));
        posix_unlock();
        return PTHREAD_BARRIER_SERIAL_THREAD;
    }
    struct posix_waiter w;
    posix_wait_enqueue(POSIX_WAITERS(barrier), &w, 0);
    posix_unlock();
    /* No timeout and not cancellable: only the round's last thread ends the wait. */
    while (posix_wait_sleep(&w, RT_FOREVER, false) != 0) {
        posix_lock();
        bool woken = !rt_list_linked(&w.node);
        posix_unlock();
        if (woken) {
            break;
        }
    }
    return 0;
}

#define BATTR_OK(a) ((a) != NULL && (a)->__magic == POSIX_MAGIC_BARRA)

int pthread_barrierattr_init(pthread_barrierattr_t *attr)
{
    if (attr == NULL) {
        return EINVAL;
    }
    attr->__pshared = PTHREAD_PROCESS_PRIVATE;
    attr->__magic = POSIX_MAGIC_BARRA;
    return 0;
}

int pthread_barrierattr_destroy(pthread_barrierattr_t *attr)
{
    if (!BATTR_OK(attr)) {
        return EINVAL;
    }
    attr->__magic = 0;
    return 0;
}

int pthread_barrierattr_getpshared(const pthread_barrierattr_t *restrict attr, int *restrict pshared)
{
    if (!BATTR_OK(attr) || pshared == NULL) {
        return EINVAL;
    }
    *pshared = attr->__pshared;
    return 0;
}

int pthread_barrierattr_setpshared(pthread_barrierattr_t *attr, int pshared)
{
    /* One process (docs/posix.md): every object is shared by all its threads either way. */
    if (!BATTR_OK(attr) || (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)) {
        return EINVAL;
    }
    attr->__pshared = pshared;
    return 0;
}
