/*
 * POSIX threads: control blocks, creation, exit, join and detach, attributes, scheduling parameters,
 * once, thread-specific data, cleanup handlers, deferred cancellation, and the wait lists the other
 * files of the part block on (pthread_impl.h).
 *
 * Stacks: a caller's (pthread_attr_setstack) or one from the C library's heap (aligned_alloc 16). The
 * control block and the rtos thread object sit at the top of that memory. A thread cannot free the
 * stack it runs on, so a joinable thread's memory is freed by its joiner once the rtos thread is dead,
 * and a detached thread that ended is put on a list that the next pthread_create, pthread_join or
 * pthread_detach (of any thread) reclaims.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../libc/libc.h"
#include "posix.h"
#include "pthread_impl.h"
#include "rtos/irq.h"
#include "rtos/system.h"
#include "rtos/thread.h"
#include "rtos/time.h"

/* What pthread_create puts at the top of a thread's stack memory. */
struct posix_block {
    struct rtmux_pthread pt;
    rt_thread_t thread;
} __attribute__((aligned(16)));

#define BLOCK_SIZE ((sizeof(struct posix_block) + 15u) & ~(size_t)15u)

/*
 * Every thread's own: the control block pointer (set by the trampoline of a thread made by
 * pthread_create, else on first use) and the control block of a thread that pthread_create did not
 * make. Kept small: every rtos thread's stack holds a copy (the kernel's idle thread's too).
 */
static _Thread_local struct {
    struct rtmux_pthread *self;
    struct rtmux_pthread native;
} tls;

static rt_mutex_t layer_lock;
static rt_list_t zombies;      /* ended detached threads, not yet reclaimed (posix_lock) */
static rt_list_t once_waiters; /* threads waiting for another's pthread_once (posix_lock) */
static unsigned live_threads;  /* threads made by pthread_create that have not exited (posix_lock) */

/* Before main() and before any application constructor of default priority. */
__attribute__((constructor(101))) static void posix_threads_init(void)
{
    (void)rt_mutex_init(&layer_lock);
    rt_list_init(&zombies);
    rt_list_init(&once_waiters);
}

void posix_lock(void)
{
    /* The layer's objects are for threads: from an interrupt handler the lock cannot be taken, and
     * going on without it could break every wait list. A clear stop instead. */
    if (rt_in_irq()) {
        rt_panic("a POSIX threads call from an interrupt handler");
    }
    (void)rt_mutex_lock(&layer_lock, RT_FOREVER);
}

void posix_unlock(void)
{
    (void)rt_mutex_unlock(&layer_lock);
}

static void block_init(struct rtmux_pthread *t)
{
    (void)rt_event_init(&t->wake, 0);
    rt_list_init(&t->joiners);
    rt_list_init(&t->zombie);
    t->cancel_state = PTHREAD_CANCEL_ENABLE;
    t->cancel_type = PTHREAD_CANCEL_DEFERRED;
}

struct rtmux_pthread *posix_self(void)
{
    struct rtmux_pthread *t = tls.self;
    if (t != NULL) {
        return t;
    }
    /* A thread pthread_create did not make: its block is in its own (zeroed) thread-local storage. */
    t = &tls.native;
    t->native = true;
    t->detached = true;
    t->rt = rt_thread_self();
    unsigned base = RT_PRIO_MIN;
    (void)rt_thread_get_priority(t->rt, &base, NULL);
    t->prio = (int)base;
    t->policy = SCHED_FIFO;
    t->name = rt_thread_name(t->rt);
    block_init(t);
    t->magic = POSIX_MAGIC_THREAD;
    tls.self = t;
    return t;
}

bool posix_thread_valid(const struct rtmux_pthread *t)
{
    return t != NULL && t->magic == POSIX_MAGIC_THREAD;
}

/* ---------------------------------------------------------------- wait lists */

void posix_wait_enqueue(rt_list_t *q, struct posix_waiter *w, int kind)
{
    struct rtmux_pthread *self = posix_self();
    /* No flag can be meant for a wait that has not started: a cancel nudge already acted on goes
     * (cancel_pending is what counts), and a wake-up is consumed by every wait that gets one. */
    (void)rt_event_clear(&self->wake, POSIX_WAKE | POSIX_CANCEL);
    unsigned eff = RT_PRIO_MIN;
    (void)rt_thread_get_priority(self->rt, NULL, &eff);
    w->thread = self;
    w->prio = eff;
    w->kind = kind;
    rt_list_t *pos = q->next;
    while (pos != q && RT_CONTAINER_OF(pos, struct posix_waiter, node)->prio >= eff) {
        pos = pos->next;
    }
    rt_list_insert_before(pos, &w->node);
}

int posix_wait_sleep(struct posix_waiter *w, rt_time_t deadline, bool cancellable)
{
    return posix_wait_sleep_or(w, deadline, cancellable, 0);
}

int posix_wait_sleep_or(struct posix_waiter *w, rt_time_t deadline, bool cancellable, uint32_t extra)
{
    struct rtmux_pthread *self = w->thread;
    uint32_t wanted = POSIX_WAKE | extra;
    if (cancellable && self->cancel_state == PTHREAD_CANCEL_ENABLE) {
        /* Set before cancel_pending is read: a request after the read finds it and nudges. */
        self->cancel_waiting = true;
        wanted |= POSIX_CANCEL;
    }
    int ret;
    for (;;) {
        if ((wanted & POSIX_CANCEL) != 0 && self->cancel_pending) {
            ret = ECANCELED;
            break;
        }
        rt_time_t timeout = RT_FOREVER;
        if (deadline != RT_FOREVER) {
            rt_time_t now = rt_time_now();
            timeout = deadline > now ? deadline - now : RT_NO_WAIT;
        }
        uint32_t seen = 0;
        int rc = rt_event_wait(&self->wake, wanted, RT_EVENT_ANY | RT_EVENT_CLEAR, &seen, timeout);
        if (rc == RT_OK && (seen & POSIX_WAKE) != 0) {
            ret = 0; /* the waker has unlinked w and will not touch it again */
            break;
        }
        if (rc == RT_OK && (seen & extra) != 0) {
            ret = ESRCH; /* w is still linked: the caller leaves (posix_wait_leave) */
            break;
        }
        if (rc == RT_ETIMEDOUT || rc == RT_EWOULDBLOCK) {
            ret = ETIMEDOUT;
            break;
        }
        if (rc != RT_OK) {
            ret = posix_errno(rc);
            break;
        }
    }
    self->cancel_waiting = false;
    return ret;
}

bool posix_wait_leave(struct posix_waiter *w)
{
    if (rt_list_linked(&w->node)) {
        rt_list_remove(&w->node);
        return false;
    }
    /* A waker came after the wait gave up: its flag is set (it set it under posix_lock); consume it. */
    (void)rt_event_clear(&w->thread->wake, POSIX_WAKE);
    return true;
}

struct posix_waiter *posix_wait_first(rt_list_t *q)
{
    return rt_list_empty(q) ? NULL : RT_CONTAINER_OF(q->next, struct posix_waiter, node);
}

void posix_wait_wake(struct posix_waiter *w)
{
    struct rtmux_pthread *t = w->thread;
    rt_list_remove(&w->node);
    (void)rt_event_set(&t->wake, POSIX_WAKE);
}

void posix_wait_wake_all(rt_list_t *q)
{
    struct posix_waiter *w;
    while ((w = posix_wait_first(q)) != NULL) {
        posix_wait_wake(w);
    }
}

rt_time_t posix_deadline(rt_time_t timeout)
{
    if (timeout == RT_FOREVER) {
        return RT_FOREVER;
    }
    rt_time_t now = rt_time_now();
    return timeout < RT_FOREVER - 1u - now ? now + timeout : RT_FOREVER - 1u;
}

/* ---------------------------------------------------------------- cancellation */

void posix_cancel_point(void)
{
    struct rtmux_pthread *self = posix_self();
    if (self->cancel_pending && self->cancel_state == PTHREAD_CANCEL_ENABLE) {
        pthread_exit(PTHREAD_CANCELED);
    }
}

void posix_testcancel(void)
{
    posix_cancel_point();
}

void pthread_testcancel(void)
{
    posix_cancel_point();
}

int pthread_cancel(pthread_t thread)
{
    if (!posix_thread_valid(thread)) {
        return ESRCH;
    }
    thread->cancel_pending = true;
    if (thread == posix_self()) {
        if (thread->cancel_type == PTHREAD_CANCEL_ASYNCHRONOUS) {
            posix_cancel_point();
        }
        return 0;
    }
    /* A thread blocked in a cancellation point of this part wakes up to act on it. */
    if (thread->cancel_waiting) {
        (void)rt_event_set(&thread->wake, POSIX_CANCEL);
    }
    return 0;
}

int pthread_setcancelstate(int state, int *oldstate)
{
    if (state != PTHREAD_CANCEL_ENABLE && state != PTHREAD_CANCEL_DISABLE) {
        return EINVAL;
    }
    struct rtmux_pthread *self = posix_self();
    if (oldstate != NULL) {
        *oldstate = self->cancel_state;
    }
    self->cancel_state = state;
    if (self->cancel_type == PTHREAD_CANCEL_ASYNCHRONOUS) {
        posix_cancel_point();
    }
    return 0;
}

int pthread_setcanceltype(int type, int *oldtype)
{
    if (type != PTHREAD_CANCEL_DEFERRED && type != PTHREAD_CANCEL_ASYNCHRONOUS) {
        return EINVAL;
    }
    struct rtmux_pthread *self = posix_self();
    if (oldtype != NULL) {
        *oldtype = self->cancel_type;
    }
    self->cancel_type = type;
    if (type == PTHREAD_CANCEL_ASYNCHRONOUS) {
        posix_cancel_point();
    }
    return 0;
}

void __rtmux_cleanup_push(struct __rtmux_cleanup *c, void (*routine)(void *), void *arg)
{
    struct rtmux_pthread *self = posix_self();
    c->__routine = routine;
    c->__arg = arg;
    c->__prev = self->cleanup;
    self->cleanup = c;
}

void __rtmux_cleanup_pop(struct __rtmux_cleanup *c, int execute)
{
    struct rtmux_pthread *self = posix_self();
    self->cleanup = c->__prev;
    if (execute != 0 && c->__routine != NULL) {
        c->__routine(c->__arg);
    }
}

/* ---------------------------------------------------------------- thread-specific data */

static struct {
    bool used;
    uint16_t gen; /* of the key now or last in the slot; keys carry it, so a deleted key stays dead */
    void (*destructor)(void *);
} keys[PTHREAD_KEYS_MAX];

/* A key is gen * PTHREAD_KEYS_MAX + slot, gen 1..65535. */
static bool key_split(pthread_key_t key, unsigned *slot, uint16_t *gen)
{
    unsigned g = key / PTHREAD_KEYS_MAX;
    if (g == 0 || g > UINT16_MAX) {
        return false;
    }
    *slot = key % PTHREAD_KEYS_MAX;
    *gen = (uint16_t)g;
    return true;
}

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *))
{
    if (key == NULL) {
        return EINVAL;
    }
    posix_lock();
    for (unsigned i = 0; i < PTHREAD_KEYS_MAX; i++) {
        if (!keys[i].used) {
            keys[i].gen = (uint16_t)(keys[i].gen == UINT16_MAX ? 1u : keys[i].gen + 1u);
            keys[i].used = true;
            keys[i].destructor = destructor;
            *key = (pthread_key_t)keys[i].gen * PTHREAD_KEYS_MAX + i;
            posix_unlock();
            return 0;
        }
    }
    posix_unlock();
    return EAGAIN;
}

static bool key_live(pthread_key_t key, unsigned *slot, uint16_t *gen)
{
    return key_split(key, slot, gen) && keys[*slot].used && keys[*slot].gen == *gen;
}

int pthread_key_delete(pthread_key_t key)
{
    unsigned slot;
    uint16_t gen;
    posix_lock();
    bool ok = key_live(key, &slot, &gen);
    if (ok) {
        /* The threads' values are left as they are (no destructor runs); the generation makes
         * them invisible to a later key in the same slot. */
        keys[slot].used = false;
        keys[slot].destructor = NULL;
    }
    posix_unlock();
    return ok ? 0 : EINVAL;
}

void *pthread_getspecific(pthread_key_t key)
{
    unsigned slot;
    uint16_t gen;
    struct posix_tsd *tsd = posix_self()->tsd;
    if (tsd == NULL || !key_live(key, &slot, &gen) || tsd->gen[slot] != gen) {
        return NULL;
    }
    return (void *)(uintptr_t)tsd->value[slot];
}

int pthread_setspecific(pthread_key_t key, const void *value)
{
    unsigned slot;
    uint16_t gen;
    if (!key_live(key, &slot, &gen)) {
        return EINVAL;
    }
    struct rtmux_pthread *self = posix_self();
    if (self->tsd == NULL) {
        self->tsd = calloc(1, sizeof(*self->tsd));
        if (self->tsd == NULL) {
            return ENOMEM;
        }
    }
    self->tsd->value[slot] = value;
    self->tsd->gen[slot] = gen;
    return 0;
}

/* At thread exit: each non-NULL value of a live key is set to NULL and its destructor called with it,
 * in rounds while destructors leave values behind, at most PTHREAD_DESTRUCTOR_ITERATIONS rounds. */
static void run_destructors(struct rtmux_pthread *self)
{
    struct posix_tsd *tsd = self->tsd;
    if (tsd == NULL) {
        return;
    }
    for (unsigned round = 0; round < PTHREAD_DESTRUCTOR_ITERATIONS; round++) {
        bool called = false;
        for (unsigned i = 0; i < PTHREAD_KEYS_MAX; i++) {
            const void *v = tsd->value[i];
            if (v == NULL) {
                continue;
            }
            tsd->value[i] = NULL;
            posix_lock();
            void (*d)(void *) = keys[i].used && keys[i].gen == tsd->gen[i] ? keys[i].destructor : NULL;
            posix_unlock();
            if (d != NULL) {
                d((void *)(uintptr_t)v);
                called = true;
            }
        }
        if (!called) {
            break;
        }
    }
}

/* ---------------------------------------------------------------- life cycle */

/* Frees what a dead pthread_create thread used. Not under posix_lock (free takes the heap's lock). */
static void reclaim(struct rtmux_pthread *t)
{
    t->magic = 0;
    free(t->tsd);
    free(t->alloc); /* the stack and the block t is in (NULL: a caller's stack, nothing to free) */
}

/* Reclaims the detached threads that have ended. */
static void reap(void)
{
    rt_list_t dead;
    rt_list_init(&dead);
    posix_lock();
    rt_list_t *n = zombies.next;
    while (n != &zombies) {
        rt_list_t *next = n->next;
        struct rtmux_pthread *t = RT_CONTAINER_OF(n, struct rtmux_pthread, zombie);
        if (rt_thread_is_dead(t->rt)) {
            rt_list_remove(n);
            rt_list_append(&dead, n);
        }
        n = next;
    }
    posix_unlock();
    while (!rt_list_empty(&dead)) {
        struct rtmux_pthread *t = RT_CONTAINER_OF(dead.next, struct rtmux_pthread, zombie);
        rt_list_remove(&t->zombie);
        reclaim(t);
    }
}

void pthread_exit(void *value_ptr)
{
    struct rtmux_pthread *self = posix_self();
    /* Cancellation points inside handlers and destructors must not start the exit over. */
    self->cancel_state = PTHREAD_CANCEL_DISABLE;
    while (self->cleanup != NULL) {
        struct __rtmux_cleanup *c = self->cleanup;
        self->cleanup = c->__prev;
        c->__routine(c->__arg);
    }
    run_destructors(self);
    rtmux_console_flush();
    if (self->native) {
        /* Its block is in its thread-local storage, which ends with it; nobody can join it. */
        free(self->tsd);
        self->magic = 0;
        rt_thread_exit();
    }
    posix_lock();
    self->retval = value_ptr;
    self->exited = true;
    bool last = --live_threads == 0;
    if (self->detached) {
        rt_list_append(&zombies, &self->zombie);
    } else {
        posix_wait_wake_all(&self->joiners);
    }
    posix_unlock();
    if (last) {
        /* The process ends with its last thread (exit status 0); threads made with the rtos's own
         * rt_thread_create do not count. */
        exit(0);
    }
    rt_thread_exit();
}

static void trampoline(void *arg)
{
    struct rtmux_pthread *t = arg;
    tls.self = t;
    if (t->policy != SCHED_FIFO) {
        (void)rt_thread_set_timeslice(t->rt, (rt_time_t)RTMUX_SCHED_RR_INTERVAL_NS);
    }
    pthread_exit(t->start(t->arg));
}

static bool policy_ok(int policy)
{
    return policy == SCHED_FIFO || policy == SCHED_RR || policy == SCHED_OTHER;
}

static bool prio_ok(int prio)
{
    return prio >= RT_PRIO_MIN && prio <= RT_PRIO_MAX;
}

int posix_thread_create_named(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                              void *arg, const char *name)
{
    if (thread == NULL || start == NULL || (attr != NULL && attr->__initialized != (int)POSIX_MAGIC_ATTR)) {
        return EINVAL;
    }
    reap();
    struct rtmux_pthread *self = posix_self();
    int policy = self->policy, prio = self->prio;
    if (attr != NULL && attr->__inheritsched == PTHREAD_EXPLICIT_SCHED) {
        policy = attr->__policy;
        prio = attr->__param.sched_priority;
    }
    if (!policy_ok(policy) || !prio_ok(prio)) {
        return EINVAL;
    }
    uint8_t *base;
    size_t size;
    void *alloc = NULL;
    struct posix_block *blk;
    if (attr != NULL && attr->__stackaddr != NULL) {
        /* A caller's stack, its 16-byte aligned part: the block takes its top. */
        uintptr_t lo = ((uintptr_t)attr->__stackaddr + 15u) & ~(uintptr_t)15u;
        base = (uint8_t *)lo;
        uintptr_t top = ((uintptr_t)attr->__stackaddr + attr->__stacksize - BLOCK_SIZE) & ~(uintptr_t)15u;
        if (attr->__stacksize < BLOCK_SIZE + 16u || top <= lo) {
            return EINVAL;
        }
        blk = (struct posix_block *)top;
        size = top - (uintptr_t)base;
    } else {
        size = attr != NULL ? attr->__stacksize : RTMUX_PTHREAD_STACK_DEFAULT;
        if (size > SIZE_MAX / 2u) {
            return EAGAIN; /* more than any heap */
        }
        size = (size + 15u) & ~(size_t)15u;
        alloc = aligned_alloc(16, size + BLOCK_SIZE);
        if (alloc == NULL) {
            return EAGAIN;
        }
        base = alloc;
        blk = (struct posix_block *)(void *)(base + size);
    }
    struct rtmux_pthread *t = &blk->pt;
    memset(blk, 0, sizeof(*blk));
    block_init(t);
    t->rt = &blk->thread;
    t->start = start;
    t->arg = arg;
    t->alloc = alloc;
    t->name = name;
    t->policy = policy;
    t->prio = prio;
    t->detached = attr != NULL && attr->__detachstate == PTHREAD_CREATE_DETACHED;
    t->magic = POSIX_MAGIC_THREAD;
    /* Stored before the thread can run, so that it may read it from where the caller put it. */
    *thread = t;
    posix_lock();
    live_threads++;
    posix_unlock();
    int rc = rt_thread_create(&blk->thread, name, trampoline, t, base, size, (unsigned)prio);
    if (rc != RT_OK) {
        posix_lock();
        live_threads--;
        posix_unlock();
        t->magic = 0;
        free(alloc);
        return rc == RT_EINVAL ? EINVAL : EAGAIN;
    }
    return 0;
}

int pthread_create(pthread_t *restrict thread, const pthread_attr_t *restrict attr,
                   void *(*start_routine)(void *), void *restrict arg)
{
    return posix_thread_create_named(thread, attr, start_routine, arg, "pthread");
}

int pthread_join(pthread_t thread, void **value_ptr)
{
    if (!posix_thread_valid(thread)) {
        return ESRCH;
    }
    struct rtmux_pthread *self = posix_self();
    if (thread == self) {
        return EDEADLK;
    }
    posix_cancel_point();
    posix_lock();
    if (thread->native || thread->detached || thread->joining) {
        posix_unlock();
        return EINVAL;
    }
    thread->joining = true;
    /* A thread that ends without its exit path (killed by the fault hook, or rt_thread_exit) is seen
     * through the kernel's notice of its end, POSIX_EXIT: no timer runs while the join waits. */
    (void)rt_event_clear(&self->wake, POSIX_EXIT);
    (void)rt_thread_on_exit(thread->rt, &self->wake, POSIX_EXIT);
    while (!thread->exited) {
        struct posix_waiter w;
        posix_wait_enqueue(&thread->joiners, &w, 0);
        posix_unlock();
        int r = posix_wait_sleep_or(&w, RT_FOREVER, true, POSIX_EXIT);
        posix_lock();
        if (r != 0 && !posix_wait_leave(&w)) {
            if (r == ECANCELED) {
                /* Cancelled while waiting: the target stays joinable. */
                thread->joining = false;
                (void)rt_thread_on_exit(thread->rt, NULL, 0);
                posix_unlock();
                posix_cancel_point();
                posix_lock();
                thread->joining = true;
                (void)rt_thread_on_exit(thread->rt, &self->wake, POSIX_EXIT);
            } else if (rt_thread_is_dead(thread->rt) && !thread->exited) {
                /* Ended without its exit path: killed by the fault hook, or rt_thread_exit. */
                thread->exited = true;
                thread->retval = PTHREAD_CANCELED;
                live_threads--;
            }
        }
    }
    (void)rt_event_clear(&self->wake, POSIX_EXIT);
    posix_unlock();
    /* It has run its exit path; wait for the rtos thread's end, after which its stack is unused. */
    (void)rt_thread_join(thread->rt, RT_FOREVER);
    if (value_ptr != NULL) {
        *value_ptr = thread->retval;
    }
    reclaim(thread);
    reap();
    return 0;
}

int pthread_detach(pthread_t thread)
{
    if (!posix_thread_valid(thread)) {
        return ESRCH;
    }
    posix_lock();
    if (thread->native || thread->detached || thread->joining) {
        posix_unlock();
        return EINVAL;
    }
    thread->detached = true;
    if (thread->exited) {
        rt_list_append(&zombies, &thread->zombie);
    }
    posix_unlock();
    reap();
    return 0;
}

pthread_t pthread_self(void)
{
    return posix_self();
}

int pthread_equal(pthread_t t1, pthread_t t2)
{
    return t1 == t2;
}

/* ---------------------------------------------------------------- once */

enum { ONCE_NEW = 0, ONCE_RUNNING = 1, ONCE_DONE = 2 };

/* The init routine was cancelled: the once is as new, and a waiter takes it over. */
static void once_cancelled(void *arg)
{
    pthread_once_t *once = arg;
    posix_lock();
    __atomic_store_n(&once->__state, ONCE_NEW, __ATOMIC_RELEASE);
    posix_wait_wake_all(&once_waiters);
    posix_unlock();
}

int pthread_once(pthread_once_t *once_control, void (*init_routine)(void))
{
    if (once_control == NULL || init_routine == NULL) {
        return EINVAL;
    }
    if (__atomic_load_n(&once_control->__state, __ATOMIC_ACQUIRE) == ONCE_DONE) {
        return 0;
    }
    posix_lock();
    for (;;) {
        int state = once_control->__state;
        if (state == ONCE_DONE) {
            posix_unlock();
            return 0;
        }
        if (state == ONCE_NEW) {
            break;
        }
        if (state != ONCE_RUNNING) {
            posix_unlock();
            return EINVAL; /* not PTHREAD_ONCE_INIT */
        }
        struct posix_waiter w;
        posix_wait_enqueue(&once_waiters, &w, 0);
        posix_unlock();
        int r = posix_wait_sleep(&w, RT_FOREVER, false);
        posix_lock();
        if (r != 0) {
            (void)posix_wait_leave(&w);
        }
    }
    once_control->__state = ONCE_RUNNING;
    posix_unlock();
    pthread_cleanup_push(once_cancelled, once_control);
    init_routine();
    pthread_cleanup_pop(0);
    posix_lock();
    __atomic_store_n(&once_control->__state, ONCE_DONE, __ATOMIC_RELEASE);
    posix_wait_wake_all(&once_waiters);
    posix_unlock();
    return 0;
}

/* ---------------------------------------------------------------- scheduling parameters */

void posix_apply_prio(struct rtmux_pthread *t, int floor)
{
    int prio = t->prio > floor ? t->prio : floor;
    for (pthread_mutex_t *m = t->protect; m != NULL; m = m->__next_protect) {
        if (m->__prioceiling > prio) {
            prio = m->__prioceiling;
        }
    }
    (void)rt_thread_set_priority(t->rt, (unsigned)prio);
}

int pthread_getcpuclockid(pthread_t thread, clockid_t *clock_id)
{
    if (!posix_thread_valid(thread) || thread->exited) {
        return ESRCH;
    }
    if (clock_id == NULL) {
        return EINVAL;
    }
    *clock_id = (clockid_t)((uintptr_t)thread->rt | POSIX_THREAD_CLOCK_TAG);
    return 0;
}

int pthread_getschedparam(pthread_t thread, int *restrict policy, struct sched_param *restrict param)
{
    if (!posix_thread_valid(thread)) {
        return ESRCH;
    }
    if (policy == NULL || param == NULL) {
        return EINVAL;
    }
    posix_lock();
    *policy = thread->policy;
    param->sched_priority = thread->prio;
    posix_unlock();
    return 0;
}

static int set_sched(pthread_t thread, int policy, int prio)
{
    if (!posix_thread_valid(thread)) {
        return ESRCH;
    }
    if (!policy_ok(policy) || !prio_ok(prio)) {
        return EINVAL;
    }
    posix_lock();
    thread->policy = policy;
    thread->prio = prio;
    if (!thread->exited) {
        posix_apply_prio(thread, 0);
        (void)rt_thread_set_timeslice(thread->rt,
                                      policy == SCHED_FIFO ? 0 : (rt_time_t)RTMUX_SCHED_RR_INTERVAL_NS);
    }
    posix_unlock();
    return 0;
}

int pthread_setschedparam(pthread_t thread, int policy, const struct sched_param *param)
{
    if (param == NULL) {
        return posix_thread_valid(thread) ? EINVAL : ESRCH;
    }
    int ret = set_sched(thread, policy, param->sched_priority);
    if (ret == 0 && thread == posix_self()) {
        /* The standard puts a thread whose parameters pthread_setschedparam set at the tail of its
         * new priority's list (pthread_setschedprio keeps a lowered one at the head, as the kernel
         * does for any other thread: docs/posix.md). */
        rt_thread_yield();
    }
    return ret;
}

int pthread_setschedprio(pthread_t thread, int prio)
{
    if (!posix_thread_valid(thread)) {
        return ESRCH;
    }
    return set_sched(thread, thread->policy, prio);
}

/* ---------------------------------------------------------------- attributes */

#define ATTR_OK(a) ((a) != NULL && (a)->__initialized == (int)POSIX_MAGIC_ATTR)

int pthread_attr_init(pthread_attr_t *attr)
{
    if (attr == NULL) {
        return EINVAL;
    }
    memset(attr, 0, sizeof(*attr));
    attr->__detachstate = PTHREAD_CREATE_JOINABLE;
    attr->__inheritsched = PTHREAD_INHERIT_SCHED;
    attr->__policy = SCHED_FIFO;
    attr->__param.sched_priority = 128;
    attr->__stacksize = RTMUX_PTHREAD_STACK_DEFAULT;
    attr->__guardsize = RT_STACK_GUARD;
    attr->__initialized = (int)POSIX_MAGIC_ATTR;
    return 0;
}

int pthread_attr_destroy(pthread_attr_t *attr)
{
    if (!ATTR_OK(attr)) {
        return EINVAL;
    }
    attr->__initialized = 0;
    return 0;
}

int pthread_attr_getdetachstate(const pthread_attr_t *attr, int *detachstate)
{
    if (!ATTR_OK(attr) || detachstate == NULL) {
        return EINVAL;
    }
    *detachstate = attr->__detachstate;
    return 0;
}

int pthread_attr_setdetachstate(pthread_attr_t *attr, int detachstate)
{
    if (!ATTR_OK(attr) ||
        (detachstate != PTHREAD_CREATE_JOINABLE && detachstate != PTHREAD_CREATE_DETACHED)) {
        return EINVAL;
    }
    attr->__detachstate = detachstate;
    return 0;
}

int pthread_attr_getguardsize(const pthread_attr_t *restrict attr, size_t *restrict guardsize)
{
    if (!ATTR_OK(attr) || guardsize == NULL) {
        return EINVAL;
    }
    *guardsize = attr->__guardsize;
    return 0;
}

int pthread_attr_setguardsize(pthread_attr_t *attr, size_t guardsize)
{
    if (!ATTR_OK(attr)) {
        return EINVAL;
    }
    attr->__guardsize = guardsize; /* kept and reported; the stack's guard is the kernel's pattern */
    return 0;
}

int pthread_attr_getinheritsched(const pthread_attr_t *restrict attr, int *restrict inheritsched)
{
    if (!ATTR_OK(attr) || inheritsched == NULL) {
        return EINVAL;
    }
    *inheritsched = attr->__inheritsched;
    return 0;
}

int pthread_attr_setinheritsched(pthread_attr_t *attr, int inheritsched)
{
    if (!ATTR_OK(attr) || (inheritsched != PTHREAD_INHERIT_SCHED && inheritsched != PTHREAD_EXPLICIT_SCHED)) {
        return EINVAL;
    }
    attr->__inheritsched = inheritsched;
    return 0;
}

int pthread_attr_getschedparam(const pthread_attr_t *restrict attr, struct sched_param *restrict param)
{
    if (!ATTR_OK(attr) || param == NULL) {
        return EINVAL;
    }
    *param = attr->__param;
    return 0;
}

int pthread_attr_setschedparam(pthread_attr_t *restrict attr, const struct sched_param *restrict param)
{
    if (!ATTR_OK(attr) || param == NULL || !prio_ok(param->sched_priority)) {
        return EINVAL;
    }
    attr->__param = *param;
    return 0;
}

int pthread_attr_getschedpolicy(const pthread_attr_t *restrict attr, int *restrict policy)
{
    if (!ATTR_OK(attr) || policy == NULL) {
        return EINVAL;
    }
    *policy = attr->__policy;
    return 0;
}

int pthread_attr_setschedpolicy(pthread_attr_t *attr, int policy)
{
    if (!ATTR_OK(attr) || !policy_ok(policy)) {
        return EINVAL;
    }
    attr->__policy = policy;
    return 0;
}

int pthread_attr_getscope(const pthread_attr_t *restrict attr, int *restrict scope)
{
    if (!ATTR_OK(attr) || scope == NULL) {
        return EINVAL;
    }
    *scope = PTHREAD_SCOPE_SYSTEM;
    return 0;
}

int pthread_attr_setscope(pthread_attr_t *attr, int scope)
{
    if (!ATTR_OK(attr)) {
        return EINVAL;
    }
    if (scope == PTHREAD_SCOPE_PROCESS) {
        return ENOTSUP; /* every thread competes with every other: one scheduler */
    }
    return scope == PTHREAD_SCOPE_SYSTEM ? 0 : EINVAL;
}

int pthread_attr_getstack(const pthread_attr_t *restrict attr, void **restrict stackaddr,
                          size_t *restrict stacksize)
{
    if (!ATTR_OK(attr) || stackaddr == NULL || stacksize == NULL) {
        return EINVAL;
    }
    *stackaddr = attr->__stackaddr;
    *stacksize = attr->__stacksize;
    return 0;
}

int pthread_attr_setstack(pthread_attr_t *attr, void *stackaddr, size_t stacksize)
{
    /* Any alignment: pthread_create uses the 16-byte aligned part of the area (AAPCS64's stack). */
    if (!ATTR_OK(attr) || stackaddr == NULL || stacksize < PTHREAD_STACK_MIN ||
        (uintptr_t)stackaddr > UINTPTR_MAX - stacksize) {
        return EINVAL;
    }
    attr->__stackaddr = stackaddr;
    attr->__stacksize = stacksize;
    return 0;
}

int pthread_attr_getstackaddr(const pthread_attr_t *restrict attr, void **restrict stackaddr)
{
    if (!ATTR_OK(attr) || stackaddr == NULL) {
        return EINVAL;
    }
    *stackaddr = attr->__stackaddr;
    return 0;
}

int pthread_attr_setstackaddr(pthread_attr_t *attr, void *stackaddr)
{
    /* The lowest address of a stack of the attribute's stacksize. */
    if (!ATTR_OK(attr) || ((uintptr_t)stackaddr & 15u) != 0) {
        return EINVAL;
    }
    attr->__stackaddr = stackaddr;
    return 0;
}

int pthread_attr_getstacksize(const pthread_attr_t *restrict attr, size_t *restrict stacksize)
{
    if (!ATTR_OK(attr) || stacksize == NULL) {
        return EINVAL;
    }
    *stacksize = attr->__stacksize;
    return 0;
}

int pthread_attr_setstacksize(pthread_attr_t *attr, size_t stacksize)
{
    if (!ATTR_OK(attr) || stacksize < PTHREAD_STACK_MIN) {
        return EINVAL;
    }
    attr->__stacksize = stacksize;
    return 0;
}
