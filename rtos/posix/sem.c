/*
 * POSIX semaphores on rtos semaphores (rt_sem: waiters wake highest priority first, FIFO within a
 * priority; a post hands the unit to the first waiter directly).
 *
 * A sem_t holds a magic (set by sem_init/sem_open, cleared by sem_destroy and the last sem_close of
 * an unlinked name, so a semaphore never initialised or destroyed gives EINVAL) and the rt_sem. Named
 * semaphores live in a list of heap blocks, one per name, each with its sem_t: sem_open of a name already
 * open returns the same address, and the block is freed when the name is unlinked and the last sem_close is
 * done. The list is guarded by one rtos mutex, initialised by a constructor before main() runs.
 */
#include <errno.h>
#include <limits.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "posix.h"
#include "rtos/irq.h"
#include "rtos/sync.h"

#define PSEM_MAGIC 0x50536d34u /* "PSm4" */

/* The rtos semaphore in a sem_t's opaque storage (<semaphore.h> includes no rtos header). */
#define KSEM(p) ((rt_sem_t *)(void *)(p)->__kobj)
_Static_assert(sizeof(((sem_t *)0)->__kobj) >= sizeof(rt_sem_t), "sem_t holds an rt_sem_t");
_Static_assert(_Alignof(unsigned long) >= _Alignof(rt_sem_t), "sem_t's storage is aligned for an rt_sem_t");

/* The semaphore behind sem, or NULL if it holds none that is live. */
static sem_t *live(sem_t *sem)
{
    return sem != NULL && sem->__magic == PSEM_MAGIC ? sem : NULL;
}

static int fail(int err)
{
    errno = err;
    return -1;
}

static void setup(sem_t *p, unsigned value, bool named)
{
    p->__waiters = 0;
    p->__named = named;
    (void)rt_sem_init(KSEM(p), value, SEM_VALUE_MAX); /* cannot fail: valid object, value <= max */
    p->__magic = PSEM_MAGIC;
}

int sem_init(sem_t *sem, int pshared, unsigned value)
{
    /* pshared: the application is one process, so every semaphore is shared by all its threads. */
    (void)pshared;
    if (sem == NULL || value > SEM_VALUE_MAX) {
        return fail(EINVAL);
    }
    setup(sem, value, false);
    return 0;
}

int sem_destroy(sem_t *sem)
{
    sem_t *p = live(sem);
    if (p == NULL || p->__named) {
        return fail(EINVAL);
    }
    if (__atomic_load_n(&p->__waiters, __ATOMIC_ACQUIRE) != 0) {
        return fail(EBUSY);
    }
    p->__magic = 0;
    return 0;
}

/* Takes a unit within timeout; 0 or an error number. */
static int take(sem_t *p, rt_time_t timeout)
{
    __atomic_fetch_add(&p->__waiters, 1u, __ATOMIC_ACQ_REL);
    int rc = rt_sem_take(KSEM(p), timeout);
    __atomic_fetch_sub(&p->__waiters, 1u, __ATOMIC_ACQ_REL);
    return rc == RT_OK ? 0 : posix_errno(rc);
}

/* sem_wait, sem_timedwait and sem_clockwait are cancellation points: a pending request is acted on at
 * entry (not from an interrupt handler, which the call refuses); a thread blocked in one is not woken
 * by a request (docs/posix.md). */
static void cancel_point(void)
{
    if (!rt_in_irq()) {
        posix_testcancel();
    }
}

int sem_wait(sem_t *sem)
{
    cancel_point();
    sem_t *p = live(sem);
    if (p == NULL) {
        return fail(EINVAL);
    }
    int err = take(p, RT_FOREVER);
    return err == 0 ? 0 : fail(err); /* EPERM: from an interrupt handler */
}

int sem_trywait(sem_t *sem)
{
    sem_t *p = live(sem);
    if (p == NULL) {
        return fail(EINVAL);
    }
    int rc = rt_sem_take(KSEM(p), RT_NO_WAIT);
    return rc == RT_OK ? 0 : fail(posix_errno(rc)); /* RT_EWOULDBLOCK: EAGAIN */
}

int sem_clockwait(sem_t *restrict sem, clockid_t clock, const struct timespec *restrict abstime)
{
    cancel_point();
    sem_t *p = live(sem);
    if (p == NULL || !posix_clock_waitable(clock)) {
        return fail(EINVAL);
    }
    /* The spec: abstime need not be valid when the semaphore can be taken at once. */
    if (rt_sem_take(KSEM(p), RT_NO_WAIT) == RT_OK) {
        return 0;
    }
    rt_time_t timeout;
    if (posix_abs_timeout(clock, abstime, &timeout) != 0) {
        return fail(EINVAL);
    }
    if (timeout == RT_NO_WAIT) {
        return fail(ETIMEDOUT); /* already passed */
    }
    int err = take(p, timeout);
    return err == 0 ? 0 : fail(err);
}

int sem_timedwait(sem_t *restrict sem, const struct timespec *restrict abstime)
{
    return sem_clockwait(sem, CLOCK_REALTIME, abstime);
}

int sem_post(sem_t *sem)
{
    sem_t *p = live(sem);
    if (p == NULL) {
        return fail(EINVAL);
    }
    int rc = rt_sem_give(KSEM(p)); /* safe from interrupt handlers, as POSIX wants of sem_post */
    return rc == RT_OK ? 0 : fail(posix_errno(rc)); /* RT_EOVERFLOW at SEM_VALUE_MAX */
}

int sem_getvalue(sem_t *restrict sem, int *restrict value)
{
    sem_t *p = live(sem);
    uint32_t count;
    if (p == NULL || value == NULL || rt_sem_count(KSEM(p), &count) != RT_OK) {
        return fail(EINVAL);
    }
    *value = (int)count; /* 0 while threads wait: the spec allows 0 or minus the waiters */
    return 0;
}

/* ---- named semaphores ---- */

struct named_sem {
    struct named_sem *next; /* in `named`, while the name is linked */
    unsigned opens;         /* sem_open calls not yet closed */
    bool linked;            /* the name still refers to it (no sem_unlink yet) */
    sem_t sem;
    char name[]; /* "/NAME" */
};

static struct named_sem *named;
static rt_mutex_t named_lock;

__attribute__((constructor)) static void named_init(void)
{
    (void)rt_mutex_init(&named_lock);
}

static struct named_sem *named_find(const char *name)
{
    for (struct named_sem *n = named; n != NULL; n = n->next) {
        if (strcmp(n->name, name) == 0) {
            return n;
        }
    }
    return NULL;
}

static void named_unlink(struct named_sem *n)
{
    for (struct named_sem **pp = &named; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == n) {
            *pp = n->next;
            break;
        }
    }
    n->linked = false;
}

sem_t *sem_open(const char *name, int oflag, ...)
{
    int err = posix_name_check(name);
    if (err == 0 && rt_in_irq()) {
        err = EPERM; /* the names' mutex */
    }
    if (err != 0) {
        errno = err;
        return SEM_FAILED;
    }
    unsigned value = 0;
    if ((oflag & O_CREAT) != 0) {
        va_list ap;
        va_start(ap, oflag);
        (void)va_arg(ap, int); /* mode_t, promoted: one user, no permissions */
        value = va_arg(ap, unsigned);
        va_end(ap);
    }
    (void)rt_mutex_lock(&named_lock, RT_FOREVER);
    struct named_sem *n = named_find(name);
    if (n != NULL) {
        if ((oflag & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
            err = EEXIST;
        } else {
            n->opens++;
        }
    } else if ((oflag & O_CREAT) == 0) {
        err = ENOENT;
    } else if (value > SEM_VALUE_MAX) {
        err = EINVAL;
    } else {
        size_t len = strlen(name) + 1u;
        n = malloc(sizeof(*n) + len);
        if (n == NULL) {
            err = ENOSPC;
        } else {
            memcpy(n->name, name, len);
            n->opens = 1;
            n->linked = true;
            setup(&n->sem, value, true);
            n->next = named;
            named = n;
        }
    }
    (void)rt_mutex_unlock(&named_lock);
    if (err != 0) {
        errno = err;
        return SEM_FAILED;
    }
    return &n->sem;
}

int sem_close(sem_t *sem)
{
    sem_t *p = live(sem);
    if (p == NULL || !p->__named) {
        return fail(EINVAL);
    }
    if (rt_in_irq()) {
        return fail(EPERM);
    }
    struct named_sem *n = RT_CONTAINER_OF(sem, struct named_sem, sem);
    (void)rt_mutex_lock(&named_lock, RT_FOREVER);
    int err = 0;
    if (n->opens == 0) {
        err = EINVAL; /* closed more often than opened: the block is gone or about to be */
    } else if (--n->opens == 0 && !n->linked) {
        p->__magic = 0;
        free(n);
    }
    (void)rt_mutex_unlock(&named_lock);
    return err == 0 ? 0 : fail(err);
}

int sem_unlink(const char *name)
{
    int err = posix_unlink_check(name);
    if (err != 0) {
        return fail(err);
    }
    (void)rt_mutex_lock(&named_lock, RT_FOREVER);
    struct named_sem *n = named_find(name);
    if (n == NULL) {
        err = ENOENT;
    } else {
        named_unlink(n);
        if (n->opens == 0) {
            n->sem.__magic = 0;
            free(n);
        }
    }
    (void)rt_mutex_unlock(&named_lock);
    return err == 0 ? 0 : fail(err);
}
