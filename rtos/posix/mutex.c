/*
 * POSIX mutexes on rtos mutexes (priority inheritance, transitive, for every protocol: inheritance
 * never delays a thread that PTHREAD_PRIO_NONE or PROTECT would not, docs/posix.md).
 *
 * Ownership is the rtos mutex's: rt_mutex_owner() is the owner's rtos thread, and only the owner
 * changes __depth. PTHREAD_PRIO_PROTECT: a thread raises itself to the ceiling before it locks, so it
 * runs at least at the ceiling from the moment it owns the mutex (a hand-over included) until it has
 * unlocked it.
 */
#include <errno.h>
#include <limits.h>

#include "posix.h"
#include "pthread_impl.h"
#include "rtos/thread.h"
#include "rtos/time.h"

_Static_assert(sizeof(((pthread_mutex_t *)0)->__kobj) >= sizeof(rt_mutex_t),
               "pthread_mutex_t holds an rt_mutex_t");

/* Whether lock and unlock can be the rtos's own calls and nothing else: the rtos's answers are
 * ERRORCHECK's (EDEADLK for a relock, EPERM for an unlock by another thread), and no ceiling or
 * recursion count is kept. */
static bool fast_path(const pthread_mutex_t *m)
{
    return (m->__type == PTHREAD_MUTEX_ERRORCHECK || m->__type == PTHREAD_MUTEX_DEFAULT) &&
           m->__protocol != PTHREAD_PRIO_PROTECT;
}

/* Enables the fast path once the object is live: __fast holds the object's own address, so a copy of
 * the object (whose __fast names the original) and a destroyed one (NULL) take the whole way. */
static void fast_enable(pthread_mutex_t *m)
{
    __atomic_store_n(&m->__fast, fast_path(m) ? (void *)m : NULL, __ATOMIC_RELEASE);
}

/* The mutex ready for use: a PTHREAD_MUTEX_INITIALIZER one is set up at its first use, under the
 * layer's lock so that two first users set it up once. EINVAL for anything not initialised. */
static int mutex_get(pthread_mutex_t *m)
{
    if (m == NULL) {
        return EINVAL;
    }
    if (POSIX_LIVE(m, POSIX_MAGIC_MUTEX)) {
        return 0;
    }
    if (__atomic_load_n(&m->__magic, __ATOMIC_ACQUIRE) != RTMUX_MUTEX_STATIC) {
        return EINVAL;
    }
    posix_lock();
    if (m->__magic == RTMUX_MUTEX_STATIC) {
        m->__type = PTHREAD_MUTEX_DEFAULT;
        m->__protocol = PTHREAD_PRIO_NONE;
        m->__prioceiling = RT_PRIO_MAX;
        m->__depth = 0;
        m->__next_protect = NULL;
        (void)rt_mutex_init(POSIX_KMUTEX(m));
        POSIX_SET_LIVE(m, POSIX_MAGIC_MUTEX);
        fast_enable(m);
    }
    int ret = POSIX_LIVE(m, POSIX_MAGIC_MUTEX) ? 0 : EINVAL;
    posix_unlock();
    return ret;
}

/*
 * PTHREAD_PRIO_PROTECT's bookkeeping, under the layer's lock. The list of a thread's held mutexes is
 * linked through the mutexes, so only an owner has a mutex on its list: a locker raises itself to the
 * ceiling before it waits (protect_raise; a thread that gives up recomputes from its list), links the
 * mutex once it owns it (protect_link), and an unlocker unlinks it before the hand-over and drops its
 * raise after (protect_unlink, protect_drop), so the next owner's link is never the old owner's.
 */
static void protect_raise(struct rtmux_pthread *self, int ceiling)
{
    posix_lock();
    posix_apply_prio(self, ceiling);
    posix_unlock();
}

static void protect_link(struct rtmux_pthread *self, pthread_mutex_t *m)
{
    posix_lock();
    m->__next_protect = self->protect;
    self->protect = m;
    posix_apply_prio(self, 0);
    posix_unlock();
}

static void protect_unlink(struct rtmux_pthread *self, pthread_mutex_t *m)
{
    posix_lock();
    for (pthread_mutex_t **p = &self->protect; *p != NULL; p = (pthread_mutex_t **)&(*p)->__next_protect) {
        if (*p == m) {
            *p = m->__next_protect;
            break;
        }
    }
    m->__next_protect = NULL;
    posix_unlock();
}

static void protect_drop(struct rtmux_pthread *self)
{
    posix_lock();
    posix_apply_prio(self, 0);
    posix_unlock();
}

enum lock_mode { LOCK_TRY, LOCK_WAIT, LOCK_TIMED };

/* check_ceiling: false for a condition wait's relock, which must not fail. */
static int lock(pthread_mutex_t *m, enum lock_mode mode, const struct timespec *abstime, bool check_ceiling)
{
    int ret = mutex_get(m);
    if (ret != 0) {
        return ret;
    }
    struct rtmux_pthread *self = posix_self();
    if (rt_mutex_owner(POSIX_KMUTEX(m)) == self->rt) {
        switch (m->__type) {
        case PTHREAD_MUTEX_RECURSIVE:
            if (m->__depth == UINT_MAX) {
                return EAGAIN;
            }
            m->__depth++;
            return 0;
        case PTHREAD_MUTEX_NORMAL:
            /* The standard's deadlock: the thread waits for ever, a timed lock until its time. */
            if (mode == LOCK_TRY) {
                return EBUSY;
            }
            if (mode == LOCK_TIMED) {
                rt_time_t timeout;
                ret = posix_abs_timeout(CLOCK_REALTIME, abstime, &timeout);
                if (ret != 0) {
                    return ret;
                }
                (void)rt_sleep(timeout);
                return ETIMEDOUT;
            }
            for (;;) {
                (void)rt_sleep(RT_FOREVER);
            }
        default: /* ERRORCHECK, and DEFAULT, which behaves as ERRORCHECK */
            return mode == LOCK_TRY ? EBUSY : EDEADLK;
        }
    }
    bool protect = m->__protocol == PTHREAD_PRIO_PROTECT;
    if (protect) {
        if (check_ceiling && self->prio > m->__prioceiling) {
            return EINVAL;
        }
        protect_raise(self, m->__prioceiling);
    }
    int rc = rt_mutex_lock(POSIX_KMUTEX(m), RT_NO_WAIT);
    if (rc == RT_EWOULDBLOCK && mode != LOCK_TRY) {
        /* The time is looked at only when the lock must wait (the standard's rule). */
        rt_time_t timeout = RT_FOREVER;
        if (mode == LOCK_TIMED) {
            ret = posix_abs_timeout(CLOCK_REALTIME, abstime, &timeout);
        }
        if (ret == 0) {
            rc = rt_mutex_lock(POSIX_KMUTEX(m), timeout);
        }
    }
    if (ret == 0 && rc != RT_OK) {
        ret = rc == RT_EWOULDBLOCK ? (mode == LOCK_TRY ? EBUSY : ETIMEDOUT) : posix_errno(rc);
    }
    if (ret != 0) {
        if (protect) {
            protect_drop(self);
        }
        return ret;
    }
    m->__depth = 1;
    if (protect) {
        protect_link(self, m);
    }
    return 0;
}

/*
 * A DEFAULT or ERRORCHECK mutex without PTHREAD_PRIO_PROTECT (__fast) is locked and unlocked by the
 * rtos's own calls and nothing else (the POSIX layer's cost over the native pair, BENCHMARKS.md): the
 * rtos checks its own object, waits with priority inheritance, answers a relock with RT_EDEADLK and an
 * unlock by another thread with RT_EPERM, which are ERRORCHECK's errors. __depth, which only a
 * recursive mutex's owner reads, is not kept for them. Everything else goes the whole way (lock()).
 */
int __rtmux_mutex_status(int rt_status)
{
    return posix_errno(rt_status);
}

__attribute__((noinline)) static int lock_wait(pthread_mutex_t *mutex)
{
    return lock(mutex, LOCK_WAIT, NULL, true);
}

int pthread_mutex_lock(pthread_mutex_t *mutex)
{
    if (__builtin_expect(mutex != NULL && mutex->__fast == mutex, 1)) {
        int rc = rt_mutex_lock(POSIX_KMUTEX(mutex), RT_FOREVER);
        return __builtin_expect(rc == RT_OK, 1) ? 0 : posix_errno(rc);
    }
    return lock_wait(mutex);
}

int pthread_mutex_trylock(pthread_mutex_t *mutex)
{
    return lock(mutex, LOCK_TRY, NULL, true);
}

int pthread_mutex_timedlock(pthread_mutex_t *restrict mutex, const struct timespec *restrict abstime)
{
    return lock(mutex, LOCK_TIMED, abstime, true);
}

static int unlock_slow(pthread_mutex_t *mutex);

int pthread_mutex_unlock(pthread_mutex_t *mutex)
{
    if (__builtin_expect(mutex != NULL && mutex->__fast == mutex, 1)) {
        int rc = rt_mutex_unlock(POSIX_KMUTEX(mutex));
        return __builtin_expect(rc == RT_OK, 1) ? 0 : posix_errno(rc);
    }
    return unlock_slow(mutex);
}

__attribute__((noinline)) static int unlock_slow(pthread_mutex_t *mutex)
{
    int ret = mutex_get(mutex);
    if (ret != 0) {
        return ret;
    }
    struct rtmux_pthread *self = posix_self();
    if (rt_mutex_owner(POSIX_KMUTEX(mutex)) != self->rt) {
        return EPERM; /* for every type: NORMAL and DEFAULT leave it undefined */
    }
    if (mutex->__depth > 1) {
        mutex->__depth--;
        return 0;
    }
    mutex->__depth = 0;
    bool protect = mutex->__protocol == PTHREAD_PRIO_PROTECT;
    if (protect) {
        protect_unlink(self, mutex);
    }
    int rc = rt_mutex_unlock(POSIX_KMUTEX(mutex));
    if (protect) {
        protect_drop(self);
    }
    return posix_errno(rc);
}

int posix_mutex_owned(pthread_mutex_t *m)
{
    int ret = mutex_get(m);
    if (ret != 0) {
        return ret;
    }
    return rt_mutex_owner(POSIX_KMUTEX(m)) == posix_self()->rt ? 0 : EPERM;
}

unsigned posix_mutex_release(pthread_mutex_t *m)
{
    unsigned depth = m->__depth;
    m->__depth = 1;
    (void)pthread_mutex_unlock(m);
    return depth;
}

void posix_mutex_reacquire(pthread_mutex_t *m, unsigned depth)
{
    /* Only a lock cycle the application made (the kernel's EDEADLK) can refuse; it is retried, as
     * the deadlock it is. */
    while (lock(m, LOCK_WAIT, NULL, false) != 0) {
        (void)rt_sleep(RT_MSEC(1));
    }
    m->__depth = depth;
}

int pthread_mutex_init(pthread_mutex_t *restrict mutex, const pthread_mutexattr_t *restrict attr)
{
    if (mutex == NULL || (attr != NULL && attr->__magic != POSIX_MAGIC_MUTEXA)) {
        return EINVAL;
    }
    if (POSIX_LIVE(mutex, POSIX_MAGIC_MUTEX) && rt_mutex_owner(POSIX_KMUTEX(mutex)) != NULL) {
        return EBUSY;
    }
    mutex->__type = attr != NULL ? attr->__type : PTHREAD_MUTEX_DEFAULT;
    mutex->__protocol = attr != NULL ? attr->__protocol : PTHREAD_PRIO_NONE;
    mutex->__prioceiling = attr != NULL ? attr->__prioceiling : RT_PRIO_MAX;
    mutex->__depth = 0;
    mutex->__next_protect = NULL;
    mutex->__fast = NULL;
    (void)rt_mutex_init(POSIX_KMUTEX(mutex));
    POSIX_SET_LIVE(mutex, POSIX_MAGIC_MUTEX);
    fast_enable(mutex);
    return 0;
}

int pthread_mutex_destroy(pthread_mutex_t *mutex)
{
    int ret = mutex_get(mutex);
    if (ret != 0) {
        return ret;
    }
    /* A mutex with waiters has an owner: the rtos hands it over directly. */
    if (rt_mutex_owner(POSIX_KMUTEX(mutex)) != NULL) {
        return EBUSY;
    }
    mutex->__fast = NULL;
    mutex->__magic = 0;
    return 0;
}

int pthread_mutex_getprioceiling(const pthread_mutex_t *restrict mutex, int *restrict prioceiling)
{
    int ret = mutex_get((pthread_mutex_t *)(uintptr_t)mutex);
    if (ret != 0) {
        return ret;
    }
    if (prioceiling == NULL || mutex->__protocol != PTHREAD_PRIO_PROTECT) {
        return EINVAL; /* a ceiling only a PTHREAD_PRIO_PROTECT mutex has */
    }
    *prioceiling = mutex->__prioceiling;
    return 0;
}

int pthread_mutex_setprioceiling(pthread_mutex_t *restrict mutex, int prioceiling, int *restrict old_ceiling)
{
    int ret = mutex_get(mutex);
    if (ret != 0) {
        return ret;
    }
    if (mutex->__protocol != PTHREAD_PRIO_PROTECT || prioceiling < RT_PRIO_MIN || prioceiling > RT_PRIO_MAX) {
        return EINVAL;
    }
    struct rtmux_pthread *self = posix_self();
    bool own = rt_mutex_owner(POSIX_KMUTEX(mutex)) == self->rt;
    if (!own) {
        /* Locked without the ceiling protocol, as the standard allows, only to change it. */
        int rc = rt_mutex_lock(POSIX_KMUTEX(mutex), RT_FOREVER);
        if (rc != RT_OK) {
            return posix_errno(rc);
        }
    }
    posix_lock();
    if (old_ceiling != NULL) {
        *old_ceiling = mutex->__prioceiling;
    }
    mutex->__prioceiling = prioceiling;
    if (own) {
        posix_apply_prio(self, 0);
    }
    posix_unlock();
    if (!own) {
        (void)rt_mutex_unlock(POSIX_KMUTEX(mutex));
    }
    return 0;
}

/* ---------------------------------------------------------------- attributes */

#define MATTR_OK(a) ((a) != NULL && (a)->__magic == POSIX_MAGIC_MUTEXA)

int pthread_mutexattr_init(pthread_mutexattr_t *attr)
{
    if (attr == NULL) {
        return EINVAL;
    }
    attr->__type = PTHREAD_MUTEX_DEFAULT;
    attr->__protocol = PTHREAD_PRIO_NONE;
    attr->__prioceiling = RT_PRIO_MAX;
    attr->__pshared = PTHREAD_PROCESS_PRIVATE;
    attr->__magic = POSIX_MAGIC_MUTEXA;
    return 0;
}

int pthread_mutexattr_destroy(pthread_mutexattr_t *attr)
{
    if (!MATTR_OK(attr)) {
        return EINVAL;
    }
    attr->__magic = 0;
    return 0;
}

int pthread_mutexattr_gettype(const pthread_mutexattr_t *restrict attr, int *restrict type)
{
    if (!MATTR_OK(attr) || type == NULL) {
        return EINVAL;
    }
    *type = attr->__type;
    return 0;
}

int pthread_mutexattr_settype(pthread_mutexattr_t *attr, int type)
{
    if (!MATTR_OK(attr) || type < PTHREAD_MUTEX_NORMAL || type > PTHREAD_MUTEX_DEFAULT) {
        return EINVAL;
    }
    attr->__type = type;
    return 0;
}

int pthread_mutexattr_getprotocol(const pthread_mutexattr_t *restrict attr, int *restrict protocol)
{
    if (!MATTR_OK(attr) || protocol == NULL) {
        return EINVAL;
    }
    *protocol = attr->__protocol;
    return 0;
}

int pthread_mutexattr_setprotocol(pthread_mutexattr_t *attr, int protocol)
{
    if (!MATTR_OK(attr)) {
        return EINVAL;
    }
    if (protocol != PTHREAD_PRIO_NONE && protocol != PTHREAD_PRIO_INHERIT &&
        protocol != PTHREAD_PRIO_PROTECT) {
        return ENOTSUP;
    }
    attr->__protocol = protocol;
    return 0;
}

int pthread_mutexattr_getprioceiling(const pthread_mutexattr_t *restrict attr, int *restrict prioceiling)
{
    if (!MATTR_OK(attr) || prioceiling == NULL) {
        return EINVAL;
    }
    *prioceiling = attr->__prioceiling;
    return 0;
}

int pthread_mutexattr_setprioceiling(pthread_mutexattr_t *attr, int prioceiling)
{
    if (!MATTR_OK(attr) || prioceiling < RT_PRIO_MIN || prioceiling > RT_PRIO_MAX) {
        return EINVAL;
    }
    attr->__prioceiling = prioceiling;
    return 0;
}

int pthread_mutexattr_getpshared(const pthread_mutexattr_t *restrict attr, int *restrict pshared)
{
    if (!MATTR_OK(attr) || pshared == NULL) {
        return EINVAL;
    }
    *pshared = attr->__pshared;
    return 0;
}

int pthread_mutexattr_setpshared(pthread_mutexattr_t *attr, int pshared)
{
    /* One process (docs/posix.md): every object is shared by all its threads either way. */
    if (!MATTR_OK(attr) || (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)) {
        return EINVAL;
    }
    attr->__pshared = pshared;
    return 0;
}
