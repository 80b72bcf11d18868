/*
 * picolibc's locks (its retargetable locking: malloc, atexit, the libc-wide recursive lock) on rtos
 * mutexes, so that stdio and malloc are safe between threads, with priority inheritance.
 *
 * Every lock here is recursive; the non-recursive calls use the same code. A lock is taken only in
 * thread context: from an interrupt handler, or before the scheduler runs, the calls do nothing (a
 * handler must not call malloc; it may format into its own buffer with snprintf, which takes no lock).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <sys/lock.h>

#include "libc.h"
#include "rtos/irq.h"
#include "rtos/sync.h"
#include "rtos/thread.h"

struct __lock {
    rt_mutex_t mutex;
    rt_thread_t *owner; /* the holder, for recursion; only the holder writes or compares it */
    unsigned depth;
};

/* The statically allocated lock picolibc names; set up by rtmux_libc_locks_init before main. */
struct __lock __lock___libc_recursive_mutex;

void rtmux_libc_locks_init(void)
{
    (void)rt_mutex_init(&__lock___libc_recursive_mutex.mutex);
}

static bool usable(void)
{
    return !rt_in_irq() && rt_thread_self() != NULL;
}

void __retarget_lock_init(_LOCK_T *lock)
{
    struct __lock *l = malloc(sizeof(*l));
    if (l != NULL) {
        l->owner = NULL;
        l->depth = 0;
        (void)rt_mutex_init(&l->mutex);
    }
    *lock = l;
}

void __retarget_lock_init_recursive(_LOCK_T *lock)
{
    __retarget_lock_init(lock);
}

void __retarget_lock_close(_LOCK_T lock)
{
    if (lock != NULL && lock != &__lock___libc_recursive_mutex) {
        free(lock);
    }
}

void __retarget_lock_close_recursive(_LOCK_T lock)
{
    __retarget_lock_close(lock);
}

static int acquire(_LOCK_T lock, rt_time_t timeout)
{
    if (lock == NULL || !usable()) {
        return 1;
    }
    rt_thread_t *self = rt_thread_self();
    if (lock->owner == self) {
        lock->depth++;
        return 1;
    }
    if (rt_mutex_lock(&lock->mutex, timeout) != RT_OK) {
        return 0;
    }
    lock->owner = self;
    lock->depth = 1;
    return 1;
}

void __retarget_lock_acquire(_LOCK_T lock)
{
    (void)acquire(lock, RT_FOREVER);
}

void __retarget_lock_acquire_recursive(_LOCK_T lock)
{
    (void)acquire(lock, RT_FOREVER);
}

int __retarget_lock_try_acquire(_LOCK_T lock)
{
    return acquire(lock, RT_NO_WAIT);
}

int __retarget_lock_try_acquire_recursive(_LOCK_T lock)
{
    return acquire(lock, RT_NO_WAIT);
}

void __retarget_lock_release(_LOCK_T lock)
{
    if (lock == NULL || !usable() || lock->owner != rt_thread_self()) {
        return;
    }
    if (--lock->depth == 0) {
        lock->owner = NULL;
        (void)rt_mutex_unlock(&lock->mutex);
    }
}

void __retarget_lock_release_recursive(_LOCK_T lock)
{
    __retarget_lock_release(lock);
}
