/*
 * POSIX threads for rtos applications (The Open Group Base Specifications Issue 7, <pthread.h>), over
 * the public rtos API (rtos/posix/). docs/posix.md lists what is supported and every deviation.
 *
 * Every object type is opaque: its members belong to the implementation and are sized to hold the
 * rtos objects it is built from (no allocation per object; the implementation checks the sizes). Each
 * carries a magic word, so an object that was never initialised, or was destroyed, gives EINVAL.
 */
#ifndef RTMUX_PTHREAD_H
#define RTMUX_PTHREAD_H

#include <rtmux/posix_features.h>
#include <rtmux/pthread_types.h>
#include <sched.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits (<limits.h> in the standard; here, where the rtos's C library lacks them) ---- */
#ifndef PTHREAD_KEYS_MAX
#define PTHREAD_KEYS_MAX 128 /* the POSIX minimum, _POSIX_THREAD_KEYS_MAX */
#endif
#ifndef PTHREAD_DESTRUCTOR_ITERATIONS
#define PTHREAD_DESTRUCTOR_ITERATIONS 4
#endif
#ifndef PTHREAD_STACK_MIN
#define PTHREAD_STACK_MIN 8192 /* the kernel's guard and minimum, thread-local data, a control block */
#endif

/* The stack of a thread created without pthread_attr_setstacksize/setstack, and SCHED_RR's slice. */
#define RTMUX_PTHREAD_STACK_DEFAULT (16u * 1024u)
#define RTMUX_SCHED_RR_INTERVAL_NS  10000000L

/* ---- constants ---- */
#define PTHREAD_CREATE_JOINABLE 0
#define PTHREAD_CREATE_DETACHED 1

#define PTHREAD_INHERIT_SCHED  0
#define PTHREAD_EXPLICIT_SCHED 1

#define PTHREAD_SCOPE_SYSTEM  0
#define PTHREAD_SCOPE_PROCESS 1

#define PTHREAD_PROCESS_PRIVATE 0
#define PTHREAD_PROCESS_SHARED  1

#define PTHREAD_MUTEX_NORMAL     0
#define PTHREAD_MUTEX_ERRORCHECK 1
#define PTHREAD_MUTEX_RECURSIVE  2
#define PTHREAD_MUTEX_DEFAULT    3

#define PTHREAD_PRIO_NONE    0
#define PTHREAD_PRIO_INHERIT 1
#define PTHREAD_PRIO_PROTECT 2

#define PTHREAD_CANCEL_ENABLE       0
#define PTHREAD_CANCEL_DISABLE      1
#define PTHREAD_CANCEL_DEFERRED     0
#define PTHREAD_CANCEL_ASYNCHRONOUS 1
#define PTHREAD_CANCELED            ((void *)-1)

#define PTHREAD_BARRIER_SERIAL_THREAD (-1)

/* ---- types ---- */
typedef unsigned pthread_key_t;

typedef struct {
    int __state; /* 0 not run, 1 running, 2 done */
} pthread_once_t;
#define PTHREAD_ONCE_INIT \
    {                     \
        0                 \
    }

typedef struct {
    unsigned __magic;
    int __type, __protocol, __prioceiling, __pshared;
} pthread_mutexattr_t;

/*
 * __self is the object's own address, set when it is initialised: a copy of an object (which the
 * standard leaves undefined) is refused with EINVAL instead of corrupting the original's wait lists.
 */
typedef struct {
    unsigned __magic;
    void *__fast; /* the object's address if lock and unlock are one rtos call each, else NULL */
    void *__self;
    int __type, __protocol, __prioceiling;
    unsigned __depth;        /* locks held by the owner (recursive mutexes) */
    void *__next_protect;    /* link in the owner's list of held PTHREAD_PRIO_PROTECT mutexes */
    unsigned long __kobj[6]; /* the rtos mutex (priority inheritance) */
} pthread_mutex_t;
/* clang-format off */
#define RTMUX_MUTEX_STATIC 0x4d555453u /* PTHREAD_MUTEX_INITIALIZER: set up by its first use */
#define PTHREAD_MUTEX_INITIALIZER {RTMUX_MUTEX_STATIC, 0, 0, 0, 0, 0, 0, 0, {0}}
/* clang-format on */

typedef struct {
    unsigned __magic;
    int __clock, __pshared;
} pthread_condattr_t;

typedef struct {
    unsigned __magic;
    void *__self;
    int __clock;
    void *__mutex;      /* the mutex of the waiters, while there are any */
    void *__waiters[2]; /* the waiting threads, most urgent first */
} pthread_cond_t;
/* clang-format off */
#define RTMUX_COND_STATIC 0x434e4453u
#define PTHREAD_COND_INITIALIZER {RTMUX_COND_STATIC, 0, 0, 0, {0, 0}}
/* clang-format on */

typedef struct {
    unsigned __magic;
    int __pshared;
} pthread_rwlockattr_t;

typedef struct {
    unsigned __magic;
    void *__self;
    unsigned __readers; /* read locks held */
    void *__writer;     /* the rtos thread holding the write lock, or 0 */
    void *__waiters[2]; /* waiting readers and writers, most urgent first */
} pthread_rwlock_t;
/* clang-format off */
#define RTMUX_RWLOCK_STATIC 0x52574c53u
#define PTHREAD_RWLOCK_INITIALIZER {RTMUX_RWLOCK_STATIC, 0, 0, 0, {0, 0}}
/* clang-format on */

typedef struct {
    unsigned __magic;
    int __pshared;
} pthread_barrierattr_t;

typedef struct {
    unsigned __magic;
    void *__self;
    unsigned __count, __arrived; /* the threshold; threads waiting in this round */
    void *__waiters[2];
} pthread_barrier_t;

typedef struct {
    unsigned __magic;
    void *__self;
    unsigned long __kobj[6]; /* the rtos mutex */
} pthread_spinlock_t;

/* pthread_cleanup_push/pop: a lexical pair; the record lives in the caller's frame. */
struct __rtmux_cleanup {
    void (*__routine)(void *);
    void *__arg;
    struct __rtmux_cleanup *__prev;
};
void __rtmux_cleanup_push(struct __rtmux_cleanup *c, void (*routine)(void *), void *arg);
void __rtmux_cleanup_pop(struct __rtmux_cleanup *c, int execute);
#define pthread_cleanup_push(routine, arg) \
    {                                      \
        struct __rtmux_cleanup __rtmux_cu; \
        __rtmux_cleanup_push(&__rtmux_cu, (routine), (arg));
#define pthread_cleanup_pop(execute)             \
    __rtmux_cleanup_pop(&__rtmux_cu, (execute)); \
    }

/* ---- threads ---- */
int pthread_create(pthread_t *restrict thread, const pthread_attr_t *restrict attr,
                   void *(*start_routine)(void *), void *restrict arg);
int pthread_join(pthread_t thread, void **value_ptr);
int pthread_detach(pthread_t thread);
void pthread_exit(void *value_ptr) __attribute__((noreturn));
pthread_t pthread_self(void);
int pthread_equal(pthread_t t1, pthread_t t2);
int pthread_once(pthread_once_t *once_control, void (*init_routine)(void));

int pthread_attr_init(pthread_attr_t *attr);
int pthread_attr_destroy(pthread_attr_t *attr);
int pthread_attr_getdetachstate(const pthread_attr_t *attr, int *detachstate);
int pthread_attr_setdetachstate(pthread_attr_t *attr, int detachstate);
int pthread_attr_getguardsize(const pthread_attr_t *restrict attr, size_t *restrict guardsize);
int pthread_attr_setguardsize(pthread_attr_t *attr, size_t guardsize);
int pthread_attr_getinheritsched(const pthread_attr_t *restrict attr, int *restrict inheritsched);
int pthread_attr_setinheritsched(pthread_attr_t *attr, int inheritsched);
int pthread_attr_getschedparam(const pthread_attr_t *restrict attr, struct sched_param *restrict param);
int pthread_attr_setschedparam(pthread_attr_t *restrict attr, const struct sched_param *restrict param);
int pthread_attr_getschedpolicy(const pthread_attr_t *restrict attr, int *restrict policy);
int pthread_attr_setschedpolicy(pthread_attr_t *attr, int policy);
int pthread_attr_getscope(const pthread_attr_t *restrict attr, int *restrict scope);
int pthread_attr_setscope(pthread_attr_t *attr, int scope);
int pthread_attr_getstack(const pthread_attr_t *restrict attr, void **restrict stackaddr,
                          size_t *restrict stacksize);
int pthread_attr_setstack(pthread_attr_t *attr, void *stackaddr, size_t stacksize);
int pthread_attr_getstackaddr(const pthread_attr_t *restrict attr, void **restrict stackaddr);
int pthread_attr_setstackaddr(pthread_attr_t *attr, void *stackaddr);
int pthread_attr_getstacksize(const pthread_attr_t *restrict attr, size_t *restrict stacksize);
int pthread_attr_setstacksize(pthread_attr_t *attr, size_t stacksize);

int pthread_getschedparam(pthread_t thread, int *restrict policy, struct sched_param *restrict param);
/* The CPU-time clock of `thread`, for clock_gettime and clock_getres (not settable, no sleeps or
 * timers on it); it stops being valid when the thread ends. */
int pthread_getcpuclockid(pthread_t thread, clockid_t *clock_id);
int pthread_setschedparam(pthread_t thread, int policy, const struct sched_param *param);
int pthread_setschedprio(pthread_t thread, int prio);

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *));
int pthread_key_delete(pthread_key_t key);
void *pthread_getspecific(pthread_key_t key);
int pthread_setspecific(pthread_key_t key, const void *value);

int pthread_cancel(pthread_t thread);
int pthread_setcancelstate(int state, int *oldstate);
int pthread_setcanceltype(int type, int *oldtype);
void pthread_testcancel(void);

/* ---- mutexes ---- */
int pthread_mutexattr_init(pthread_mutexattr_t *attr);
int pthread_mutexattr_destroy(pthread_mutexattr_t *attr);
int pthread_mutexattr_gettype(const pthread_mutexattr_t *restrict attr, int *restrict type);
int pthread_mutexattr_settype(pthread_mutexattr_t *attr, int type);
int pthread_mutexattr_getprotocol(const pthread_mutexattr_t *restrict attr, int *restrict protocol);
int pthread_mutexattr_setprotocol(pthread_mutexattr_t *attr, int protocol);
int pthread_mutexattr_getprioceiling(const pthread_mutexattr_t *restrict attr, int *restrict prioceiling);
int pthread_mutexattr_setprioceiling(pthread_mutexattr_t *attr, int prioceiling);
int pthread_mutexattr_getpshared(const pthread_mutexattr_t *restrict attr, int *restrict pshared);
int pthread_mutexattr_setpshared(pthread_mutexattr_t *attr, int pshared);

int pthread_mutex_init(pthread_mutex_t *restrict mutex, const pthread_mutexattr_t *restrict attr);
int pthread_mutex_destroy(pthread_mutex_t *mutex);
int pthread_mutex_lock(pthread_mutex_t *mutex);
int pthread_mutex_trylock(pthread_mutex_t *mutex);
int pthread_mutex_timedlock(pthread_mutex_t *restrict mutex, const struct timespec *restrict abstime);
int pthread_mutex_unlock(pthread_mutex_t *mutex);
int pthread_mutex_getprioceiling(const pthread_mutex_t *restrict mutex, int *restrict prioceiling);
int pthread_mutex_setprioceiling(pthread_mutex_t *restrict mutex, int prioceiling, int *restrict old_ceiling);

/*
 * pthread_mutex_lock and pthread_mutex_unlock's uncontended path, inlined where they are called: a
 * DEFAULT or ERRORCHECK mutex that is not PTHREAD_PRIO_PROTECT (__fast holds its own address) is one
 * call of the rtos's mutex (rtos/sync.h; the rtos checks its object, waits with priority inheritance,
 * and answers a relock or a stranger's unlock with errors that are ERRORCHECK's), anything else is the
 * library's function. The functions exist as well: `(pthread_mutex_lock)(m)`, `#undef` or a pointer
 * to them reach them. Why: the layer's cost over the native call (docs/posix.md, "What POSIX costs").
 */
#ifndef __RTMUX_POSIX_IMPL
struct rt_mutex;
int rt_mutex_lock(struct rt_mutex *__m, __UINT64_TYPE__ __timeout);
int rt_mutex_unlock(struct rt_mutex *__m);
int __rtmux_mutex_status(int __rt_status); /* the errno value of an rtos status */

static inline int __rtmux_pthread_mutex_lock(pthread_mutex_t *__m)
{
    if (__builtin_expect(__m != 0 && __m->__fast == (void *)__m, 1)) {
        int __rc = rt_mutex_lock((struct rt_mutex *)(void *)__m->__kobj, ~(__UINT64_TYPE__)0);
        return __builtin_expect(__rc == 0, 1) ? 0 : __rtmux_mutex_status(__rc);
    }
    return (pthread_mutex_lock)(__m);
}

static inline int __rtmux_pthread_mutex_unlock(pthread_mutex_t *__m)
{
    if (__builtin_expect(__m != 0 && __m->__fast == (void *)__m, 1)) {
        int __rc = rt_mutex_unlock((struct rt_mutex *)(void *)__m->__kobj);
        return __builtin_expect(__rc == 0, 1) ? 0 : __rtmux_mutex_status(__rc);
    }
    return (pthread_mutex_unlock)(__m);
}

#define pthread_mutex_lock(m)   __rtmux_pthread_mutex_lock(m)
#define pthread_mutex_unlock(m) __rtmux_pthread_mutex_unlock(m)
#endif

/* ---- condition variables ---- */
int pthread_condattr_init(pthread_condattr_t *attr);
int pthread_condattr_destroy(pthread_condattr_t *attr);
int pthread_condattr_getclock(const pthread_condattr_t *restrict attr, clockid_t *restrict clock_id);
int pthread_condattr_setclock(pthread_condattr_t *attr, clockid_t clock_id);
int pthread_condattr_getpshared(const pthread_condattr_t *restrict attr, int *restrict pshared);
int pthread_condattr_setpshared(pthread_condattr_t *attr, int pshared);

int pthread_cond_init(pthread_cond_t *restrict cond, const pthread_condattr_t *restrict attr);
int pthread_cond_destroy(pthread_cond_t *cond);
int pthread_cond_wait(pthread_cond_t *restrict cond, pthread_mutex_t *restrict mutex);
int pthread_cond_timedwait(pthread_cond_t *restrict cond, pthread_mutex_t *restrict mutex,
                           const struct timespec *restrict abstime);
int pthread_cond_signal(pthread_cond_t *cond);
int pthread_cond_broadcast(pthread_cond_t *cond);

/* ---- read-write locks ---- */
int pthread_rwlockattr_init(pthread_rwlockattr_t *attr);
int pthread_rwlockattr_destroy(pthread_rwlockattr_t *attr);
int pthread_rwlockattr_getpshared(const pthread_rwlockattr_t *restrict attr, int *restrict pshared);
int pthread_rwlockattr_setpshared(pthread_rwlockattr_t *attr, int pshared);

int pthread_rwlock_init(pthread_rwlock_t *restrict rwlock, const pthread_rwlockattr_t *restrict attr);
int pthread_rwlock_destroy(pthread_rwlock_t *rwlock);
int pthread_rwlock_rdlock(pthread_rwlock_t *rwlock);
int pthread_rwlock_tryrdlock(pthread_rwlock_t *rwlock);
int pthread_rwlock_timedrdlock(pthread_rwlock_t *restrict rwlock, const struct timespec *restrict abstime);
int pthread_rwlock_wrlock(pthread_rwlock_t *rwlock);
int pthread_rwlock_trywrlock(pthread_rwlock_t *rwlock);
int pthread_rwlock_timedwrlock(pthread_rwlock_t *restrict rwlock, const struct timespec *restrict abstime);
int pthread_rwlock_unlock(pthread_rwlock_t *rwlock);

/* ---- barriers ---- */
int pthread_barrierattr_init(pthread_barrierattr_t *attr);
int pthread_barrierattr_destroy(pthread_barrierattr_t *attr);
int pthread_barrierattr_getpshared(const pthread_barrierattr_t *restrict attr, int *restrict pshared);
int pthread_barrierattr_setpshared(pthread_barrierattr_t *attr, int pshared);

int pthread_barrier_init(pthread_barrier_t *restrict barrier, const pthread_barrierattr_t *restrict attr,
                         unsigned count);
int pthread_barrier_destroy(pthread_barrier_t *barrier);
int pthread_barrier_wait(pthread_barrier_t *barrier);

/* ---- spin locks ---- */
int pthread_spin_init(pthread_spinlock_t *lock, int pshared);
int pthread_spin_destroy(pthread_spinlock_t *lock);
int pthread_spin_lock(pthread_spinlock_t *lock);
int pthread_spin_trylock(pthread_spinlock_t *lock);
int pthread_spin_unlock(pthread_spinlock_t *lock);

#ifdef __cplusplus
}
#endif

#endif /* RTMUX_PTHREAD_H */
