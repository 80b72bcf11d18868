/*
 * Internal interface of the POSIX threads part (pthread.c, mutex.c, cond.c, rwlock.c, barrier.c,
 * spin.c, sched.c): thread control blocks, the layer's lock, and the wait lists every blocking object
 * of the part is built on. Built on the public rtos API only.
 *
 * Dependencies between the files run one way: pthread.c is the bottom; mutex.c uses it; cond.c uses
 * both; rwlock.c, barrier.c, spin.c and sched.c use pthread.c only.
 */
#ifndef RTOS_POSIX_PTHREAD_IMPL_H
#define RTOS_POSIX_PTHREAD_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "rtos/kobj.h"
#include "rtos/list.h"
#include "rtos/sync.h"
#include "rtos/types.h"

/* Magic words of live objects; a destroyed object's word is cleared. */
#define POSIX_MAGIC_THREAD  0x50544852u
#define POSIX_MAGIC_ATTR    0x50415452u
#define POSIX_MAGIC_MUTEX   0x4d555458u
#define POSIX_MAGIC_MUTEXA  0x4d545841u
#define POSIX_MAGIC_COND    0x434f4e44u
#define POSIX_MAGIC_CONDA   0x434e4441u
#define POSIX_MAGIC_RWLOCK  0x52574c4bu
#define POSIX_MAGIC_RWLOCKA 0x52574c41u
#define POSIX_MAGIC_BARRIER 0x42415252u
#define POSIX_MAGIC_BARRA   0x42524141u
#define POSIX_MAGIC_SPIN    0x5350494eu

/* Read locks a thread can hold at once on distinct rwlocks (more: EAGAIN, docs/posix.md). */
#define POSIX_RDLOCKS_MAX 8u

/*
 * A thread's control block; pthread_t points to it. A thread made by pthread_create has it at the top
 * of its stack's memory (with the rtos thread object), which lives until the thread is joined, or,
 * detached, until it has ended and the next pthread_create/join/detach reclaims it. Any other thread
 * (created with rt_thread_create, or the kernel's own) has one in its thread-local storage, made on its
 * first use (pthread_self and every call that needs it): such a thread is detached and never reclaimed.
 * Fields are written by the thread itself, or under posix_lock.
 */
struct rtmux_pthread {
    uint32_t magic;
    bool native;     /* not made by pthread_create */
    bool detached;   /* joinable threads are reclaimed by their joiner */
    bool exited;     /* has run its exit path; the rtos thread is ending or dead */
    bool joining;    /* someone is in pthread_join on it */
    rt_thread_t *rt; /* the rtos thread */
    void *(*start)(void *);
    void *arg;
    void *retval;
    void *alloc; /* heap memory to free when reclaimed (the stack and this block), or NULL */
    const char *name;
    int policy;               /* SCHED_FIFO, SCHED_RR or SCHED_OTHER */
    int prio;                 /* the priority the application set; PTHREAD_PRIO_PROTECT may add to it */
    pthread_mutex_t *protect; /* held PTHREAD_PRIO_PROTECT mutexes, linked through the mutexes */
    rt_event_t wake;          /* the thread's own flags: every wait of the part blocks on them */
    rt_list_t joiners;        /* posix_waiter list: the thread in pthread_join on this one */
    rt_list_t zombie;         /* link in the list of ended detached threads awaiting reclaim */
    volatile bool cancel_pending;
    volatile bool cancel_waiting; /* blocked in a cancellation point that a cancel request wakes */
    int cancel_state, cancel_type;
    struct __rtmux_cleanup *cleanup; /* pthread_cleanup_push records, newest first */
    struct {
        const void *lock;
        unsigned count;
    } rdlocks[POSIX_RDLOCKS_MAX]; /* read locks held, for recursion and unlock (rwlock.c) */
    struct posix_tsd *tsd;        /* pthread_setspecific's values, allocated at its first use */
};

/* A thread's thread-specific data: the value of key slot i, valid while gen[i] is the key's. */
struct posix_tsd {
    const void *value[PTHREAD_KEYS_MAX];
    uint16_t gen[PTHREAD_KEYS_MAX];
};

/* The calling thread's control block (never NULL in thread context). */
struct rtmux_pthread *posix_self(void);

/* The errno value of an rtos status, for <pthread.h>'s inlined mutex path (mutex.c). */
int __rtmux_mutex_status(int rt_status);

/* Whether t is a live control block (its magic word); NULL is not. */
bool posix_thread_valid(const struct rtmux_pthread *t);

/* The layer's lock (an rtos mutex, priority inheritance): thread life cycles, keys, once, the first
 * use of statically initialised objects, PTHREAD_PRIO_PROTECT's bookkeeping, every wait list and the
 * state of condition variables, read-write locks and barriers. Held briefly; not recursive. */
void posix_lock(void);
void posix_unlock(void);

/*
 * Sets t's rtos base priority to the highest of t->prio, `floor` (0: none) and the ceilings of the
 * PTHREAD_PRIO_PROTECT mutexes on t->protect. Under posix_lock.
 */
void posix_apply_prio(struct rtmux_pthread *t, int floor);

/*
 * Wait lists: threads waiting for an object of this part (a condition variable, a read-write lock, a
 * barrier, a thread's end, a once), most urgent first (by their effective priority when they started
 * waiting), first come first within a priority. Every list is guarded by posix_lock, not by a lock in
 * the object: a woken thread never touches the object again, so an object may be destroyed (and its
 * memory reused) as soon as no thread waits on it, as the standard allows for condition variables.
 *
 * A waiter blocks on its thread's own event flags. A waker takes the waiter off its list and sets its
 * WAKE flag in one step under posix_lock, so "enqueue, release posix_lock (and the user's mutex),
 * block" loses nothing: a wake-up in between stays in the flag.
 */
struct posix_waiter {
    rt_list_t node; /* on the list while waiting; a waker unlinks it */
    struct rtmux_pthread *thread;
    unsigned prio;
    int kind; /* the object's own tag (rwlock.c: reader or writer) */
};

#define POSIX_WAKE   (1u << 0)
#define POSIX_CANCEL (1u << 1) /* a nudge: cancel_pending is the request */
#define POSIX_EXIT   (1u << 2) /* the thread pthread_join waits for has ended (rt_thread_on_exit) */

/* Under posix_lock: puts the caller on q in priority order. */
void posix_wait_enqueue(rt_list_t *q, struct posix_waiter *w, int kind);
/*
 * Without posix_lock: blocks until w is woken (0), the rtos time `deadline` passes (ns since boot;
 * RT_FOREVER: never; ETIMEDOUT) or, if `cancellable` and the thread's cancel state is enabled, a cancel
 * request arrives (ECANCELED). After anything but 0 the caller takes posix_lock and calls
 * posix_wait_leave, since a waker may have come in between.
 */
int posix_wait_sleep(struct posix_waiter *w, rt_time_t deadline, bool cancellable);
/* posix_wait_sleep that also ends, with ESRCH, when one of `extra` is set in the thread's flags. */
int posix_wait_sleep_or(struct posix_waiter *w, rt_time_t deadline, bool cancellable, uint32_t extra);
/* Under posix_lock, after posix_wait_sleep failed: takes w off its list if no waker did; returns
 * whether a waker did (the wait succeeded after all). */
bool posix_wait_leave(struct posix_waiter *w);
/* Under posix_lock: the first (most urgent) waiter of q, or NULL. */
struct posix_waiter *posix_wait_first(rt_list_t *q);
/* Under posix_lock: takes w off its list and wakes its thread. */
void posix_wait_wake(struct posix_waiter *w);
/* Under posix_lock: wakes every waiter of q, most urgent first. */
void posix_wait_wake_all(rt_list_t *q);

/* An absolute rtos deadline for a relative rtos timeout (RT_FOREVER stays forever). */
rt_time_t posix_deadline(rt_time_t timeout);

/* Acts on a pending cancel request of the caller if its cancel state allows (does not return then). */
void posix_cancel_point(void);

/* Whether obj is a live object of this magic word (and not a copy of one: pthread.h's __self). */
#define POSIX_LIVE(obj, magic) \
    (__atomic_load_n(&(obj)->__magic, __ATOMIC_ACQUIRE) == (magic) && (obj)->__self == (void *)(obj))
/* Makes obj live: its address, then its magic word. */
#define POSIX_SET_LIVE(obj, magic)                                    \
    do {                                                              \
        (obj)->__self = (void *)(obj);                                \
        __atomic_store_n(&(obj)->__magic, (magic), __ATOMIC_RELEASE); \
    } while (0)

/* The rtos mutex inside an object's opaque storage (sizes checked by the files that use them). */
#define POSIX_KMUTEX(obj) ((rt_mutex_t *)(void *)(obj)->__kobj)
/* The wait list inside an object's opaque storage. */
#define POSIX_WAITERS(obj) ((rt_list_t *)(void *)(obj)->__waiters)

/* pthread_create with the rtos thread's name (start.c: "main"). */
int posix_thread_create_named(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                              void *arg, const char *name);

/*
 * The user's mutex around a condition wait (mutex.c, for cond.c): owned says 0, EINVAL (not a mutex)
 * or EPERM (the caller does not own it); release unlocks m, which the caller owns, whatever its
 * recursion depth, and returns the depth; reacquire locks it again (not a cancellation point, no
 * timeout) and restores the depth. Not under posix_lock.
 */
int posix_mutex_owned(pthread_mutex_t *m);
unsigned posix_mutex_release(pthread_mutex_t *m);
void posix_mutex_reacquire(pthread_mutex_t *m, unsigned depth);

#endif /* RTOS_POSIX_PTHREAD_IMPL_H */
