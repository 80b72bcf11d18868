/*
 * POSIX message queues over rtos semaphores and a mutex.
 *
 * A queue is one heap block (mq_open allocates it, sized by its attributes: the C library's heap,
 * HEAP_SIZE): its name, MQ slots of msgsize bytes each, and `order`, the indices of the slots that
 * hold messages, sorted by priority (highest first) and by arrival within a priority. A send inserts
 * its index behind the last one of the same or a higher priority, a receive takes order[0]: O(maxmsg)
 * index moves per message, none of the messages themselves.
 * Two counting semaphores make the waits: `space` (free slots) and `data` (messages). A sender takes a
 * unit of `space`, inserts under the queue's mutex and gives `data`; a receiver takes `data`, removes
 * under the mutex and gives `space`. So a thread that got its unit always finds a slot or a message,
 * and waiting senders and receivers are served most urgent first (the kernel's wait queues), FIFO
 * within a priority.
 *
 * Every call takes mutexes, so none is for interrupt handlers (EPERM there).
 * Descriptors (mqd_t) are a slot of a fixed table (low 8 bits, plus one) and that slot's generation,
 * so a closed descriptor or any other number is EBADF and never followed as a pointer. One mutex
 * (`table`) guards the descriptors, the list of names and every queue's reference count: a queue is
 * freed when it has no name, no open descriptor and no call in progress (a call holds a reference
 * while it runs, so a queue closed and unlinked under a blocked receiver is not freed beneath it).
 */
#include <errno.h>
#include <limits.h>
#include <mqueue.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "posix.h"
#include "rtos/irq.h"
#include "rtos/sync.h"

struct msg_head {
    size_t len;
    unsigned prio;
};

struct pmq {
    struct pmq *next; /* in `names` while linked */
    bool linked;
    unsigned refs; /* open descriptors + calls in progress */
    rt_mutex_t lock;
    rt_sem_t space, data;
    size_t maxmsg, msgsize, stride;
    size_t count;    /* messages held; under lock */
    uint32_t *order; /* count slot indices, by priority then arrival */
    uint32_t *free;  /* maxmsg - count free slot indices (a stack) */
    uint8_t *slots;  /* maxmsg * stride: a msg_head then the bytes */
    char name[];
};

struct mqdesc {
    struct pmq *q; /* NULL: free */
    int flags;     /* O_RDONLY/O_WRONLY/O_RDWR and O_NONBLOCK */
};

static struct mqdesc descs[MQ_OPEN_MAX];
static unsigned generation[MQ_OPEN_MAX];
static struct pmq *names;
static rt_mutex_t table;

__attribute__((constructor)) static void mq_table_init(void)
{
    (void)rt_mutex_init(&table);
}

static int fail(int err)
{
    errno = err;
    return -1;
}

static void table_lock(void)
{
    (void)rt_mutex_lock(&table, RT_FOREVER);
}

static void table_unlock(void)
{
    (void)rt_mutex_unlock(&table);
}

#define GEN_MASK 0x3fffffu /* mqd_t stays positive */

/* The descriptor slot mqd names, or -1. Table lock held. */
static int desc_slot(mqd_t mqd)
{
    if (mqd <= 0) {
        return -1;
    }
    unsigned slot = ((unsigned)mqd & 0xffu) - 1u;
    if (slot >= MQ_OPEN_MAX || descs[slot].q == NULL || generation[slot] != ((unsigned)mqd >> 8)) {
        return -1;
    }
    return (int)slot;
}

/* Drops a reference; frees the queue once nothing refers to it. Table lock held. */
static void unref(struct pmq *q)
{
    if (--q->refs == 0 && !q->linked) {
        free(q);
    }
}

/*
 * Starts a call on mqd: the queue with a reference taken and the descriptor's flags, or NULL with
 * errno set: EBADF, or EPERM in an interrupt handler (the calls take mutexes).
 * `need` is the access the call needs (O_WRONLY for a send, O_RDONLY for a receive, -1 for none).
 */
static struct pmq *begin(mqd_t mqd, int need, int *flags)
{
    if (rt_in_irq()) {
        errno = EPERM;
        return NULL;
    }
    table_lock();
    int slot = desc_slot(mqd);
    struct pmq *q = NULL;
    if (slot >= 0) {
        int acc = descs[slot].flags & O_ACCMODE;
        bool ok = need < 0 || acc == O_RDWR || acc == need;
        if (ok) {
            q = descs[slot].q;
            q->refs++;
            *flags = descs[slot].flags;
        }
    }
    table_unlock();
    if (q == NULL) {
        errno = EBADF;
    }
    return q;
}

static void end(struct pmq *q)
{
    table_lock();
    unref(q);
    table_unlock();
}

static struct pmq *find_name(const char *name)
{
    for (struct pmq *q = names; q != NULL; q = q->next) {
        if (strcmp(q->name, name) == 0) {
            return q;
        }
    }
    return NULL;
}

static size_t align8(size_t n)
{
    return (n + 7u) & ~(size_t)7u;
}

/* A new queue, or NULL (ENOSPC: no room in the heap). attr checked already. */
static struct pmq *create(const char *name, size_t maxmsg, size_t msgsize)
{
    size_t namelen = strlen(name) + 1u;
    size_t stride = align8(sizeof(struct msg_head) + msgsize);
    size_t head = align8(sizeof(struct pmq) + namelen);
    size_t idx = align8(2u * maxmsg * sizeof(uint32_t));
    /* maxmsg <= MQ_MAXMSG_MAX and msgsize <= MQ_MSGSIZE_MAX: the sizes cannot overflow. */
    struct pmq *q = malloc(head + idx + maxmsg * stride);
    if (q == NULL) {
        return NULL;
    }
    memcpy(q->name, name, namelen);
    q->next = NULL;
    q->linked = false;
    q->refs = 0;
    q->maxmsg = maxmsg;
    q->msgsize = msgsize;
    q->stride = stride;
    q->count = 0;
    q->order = (uint32_t *)(void *)((uint8_t *)q + head);
    q->free = q->order + maxmsg;
    q->slots = (uint8_t *)q + head + idx;
    for (size_t i = 0; i < maxmsg; i++) {
        q->free[i] = (uint32_t)(maxmsg - 1u - i);
    }
    (void)rt_mutex_init(&q->lock);
    (void)rt_sem_init(&q->space, (uint32_t)maxmsg, (uint32_t)maxmsg);
    (void)rt_sem_init(&q->data, 0, (uint32_t)maxmsg);
    return q;
}

mqd_t mq_open(const char *name, int oflag, ...)
{
    int err = posix_name_check(name);
    int acc = oflag & O_ACCMODE;
    if (err == 0 && acc != O_RDONLY && acc != O_WRONLY && acc != O_RDWR) {
        err = EINVAL;
    }
    const struct mq_attr *attr = NULL;
    if ((oflag & O_CREAT) != 0) {
        va_list ap;
        va_start(ap, oflag);
        (void)va_arg(ap, int); /* mode_t, promoted: one user, no permissions */
        attr = va_arg(ap, const struct mq_attr *);
        va_end(ap);
    }
    if (err == 0 && rt_in_irq()) {
        err = EPERM;
    }
    if (err != 0) {
        return fail(err);
    }
    table_lock();
    unsigned slot = 0;
    while (slot < MQ_OPEN_MAX && descs[slot].q != NULL) {
        slot++;
    }
    struct pmq *q = find_name(name);
    if (slot == MQ_OPEN_MAX) {
        err = EMFILE;
    } else if (q != NULL) {
        if ((oflag & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
            err = EEXIST;
        }
    } else if ((oflag & O_CREAT) == 0) {
        err = ENOENT;
    } else {
        long maxmsg = MQ_MAXMSG_DEFAULT, msgsize = MQ_MSGSIZE_DEFAULT;
        if (attr != NULL) {
            maxmsg = attr->mq_maxmsg;
            msgsize = attr->mq_msgsize;
        }
        if (maxmsg <= 0 || msgsize <= 0 || maxmsg > MQ_MAXMSG_MAX || msgsize > MQ_MSGSIZE_MAX) {
            err = EINVAL;
        } else if ((q = create(name, (size_t)maxmsg, (size_t)msgsize)) == NULL) {
            err = ENOSPC;
        } else {
            q->linked = true;
            q->next = names;
            names = q;
        }
    }
    mqd_t mqd = -1;
    if (err == 0) {
        q->refs++;
        descs[slot].q = q;
        descs[slot].flags = oflag & (O_ACCMODE | O_NONBLOCK);
        mqd = (mqd_t)((generation[slot] << 8) | (slot + 1u));
    }
    table_unlock();
    return err == 0 ? mqd : fail(err);
}

int mq_close(mqd_t mqd)
{
    if (rt_in_irq()) {
        return fail(EPERM);
    }
    table_lock();
    int slot = desc_slot(mqd);
    if (slot >= 0) {
        struct pmq *q = descs[slot].q;
        descs[slot].q = NULL;
        generation[slot] = (generation[slot] + 1u) & GEN_MASK; /* the old descriptor is refused */
        unref(q);
    }
    table_unlock();
    return slot < 0 ? fail(EBADF) : 0;
}

int mq_unlink(const char *name)
{
    int err = posix_unlink_check(name);
    if (err != 0) {
        return fail(err);
    }
    table_lock();
    struct pmq *q = find_name(name);
    if (q == NULL) {
        err = ENOENT;
    } else {
        for (struct pmq **pp = &names; *pp != NULL; pp = &(*pp)->next) {
            if (*pp == q) {
                *pp = q->next;
                break;
            }
        }
        q->linked = false;
        if (q->refs == 0) {
            free(q); /* else the last close or call frees it */
        }
    }
    table_unlock();
    return err == 0 ? 0 : fail(err);
}

/* The rtos timeout of a call: at once with O_NONBLOCK, until abstime (CLOCK_REALTIME) if given, else
 * for ever. 0 or EINVAL (a bad abstime; checked only when the call has to wait, as the spec says). */
static int call_timeout(int flags, const struct timespec *abstime, bool timed, rt_time_t *timeout)
{
    if ((flags & O_NONBLOCK) != 0) {
        *timeout = RT_NO_WAIT;
        return 0;
    }
    if (!timed) {
        *timeout = RT_FOREVER;
        return 0;
    }
    return posix_abs_timeout(CLOCK_REALTIME, abstime, timeout);
}

/* Takes a unit of s for a call: first without waiting, then as flags and abstime say. 0 or errno. */
static int wait_unit(rt_sem_t *s, int flags, const struct timespec *abstime, bool timed)
{
    int rc = rt_sem_take(s, RT_NO_WAIT);
    if (rc == RT_EWOULDBLOCK) {
        rt_time_t timeout;
        if (call_timeout(flags, abstime, timed, &timeout) != 0) {
            return EINVAL;
        }
        if (timeout == RT_NO_WAIT) {
            return (flags & O_NONBLOCK) != 0 ? EAGAIN : ETIMEDOUT;
        }
        rc = rt_sem_take(s, timeout);
    }
    return rc == RT_OK ? 0 : posix_errno(rc);
}

/* The sends and receives are cancellation points: a pending request is acted on at entry, before the
 * call takes a reference (not from an interrupt handler, which begin() refuses); a thread blocked in
 * one is not woken by a request (docs/posix.md). */
static void cancel_point(void)
{
    if (!rt_in_irq()) {
        posix_testcancel();
    }
}

static int send(mqd_t mqd, const char *msg, size_t len, unsigned prio, const struct timespec *abstime,
                bool timed)
{
    cancel_point();
    int flags = 0;
    struct pmq *q = begin(mqd, O_WRONLY, &flags);
    if (q == NULL) {
        return -1;
    }
    int err = 0;
    if (len > q->msgsize) {
        err = EMSGSIZE;
    } else if (prio >= MQ_PRIO_MAX || (msg == NULL && len != 0)) {
        err = EINVAL;
    } else {
        err = wait_unit(&q->space, flags, abstime, timed);
    }
    if (err == 0) {
        (void)rt_mutex_lock(&q->lock, RT_FOREVER);
        uint32_t s = q->free[q->maxmsg - q->count - 1u];
        struct msg_head *h = (struct msg_head *)(void *)(q->slots + (size_t)s * q->stride);
        h->len = len;
        h->prio = prio;
        if (len != 0) {
            memcpy(h + 1, msg, len);
        }
        /* Behind every message of the same or a higher priority. */
        size_t at = q->count;
        while (at > 0) {
            const struct msg_head *o =
                (const struct msg_head *)(const void *)(q->slots + (size_t)q->order[at - 1u] * q->stride);
            if (o->prio >= prio) {
                break;
            }
            at--;
        }
        memmove(&q->order[at + 1u], &q->order[at], (q->count - at) * sizeof(q->order[0]));
        q->order[at] = s;
        q->count++;
        (void)rt_mutex_unlock(&q->lock);
        (void)rt_sem_give(&q->data);
    }
    end(q);
    return err == 0 ? 0 : fail(err);
}

static ssize_t receive(mqd_t mqd, char *msg, size_t len, unsigned *prio, const struct timespec *abstime,
                       bool timed)
{
    cancel_point();
    int flags = 0;
    struct pmq *q = begin(mqd, O_RDONLY, &flags);
    if (q == NULL) {
        return -1;
    }
    int err = 0;
    ssize_t got = -1;
    if (len < q->msgsize) {
        err = EMSGSIZE;
    } else if (msg == NULL) {
        err = EINVAL;
    } else {
        err = wait_unit(&q->data, flags, abstime, timed);
    }
    if (err == 0) {
        (void)rt_mutex_lock(&q->lock, RT_FOREVER);
        uint32_t s = q->order[0];
        q->count--;
        memmove(&q->order[0], &q->order[1], q->count * sizeof(q->order[0]));
        q->free[q->maxmsg - q->count - 1u] = s;
        const struct msg_head *h = (const struct msg_head *)(const void *)(q->slots + (size_t)s * q->stride);
        memcpy(msg, h + 1, h->len);
        got = (ssize_t)h->len;
        if (prio != NULL) {
            *prio = h->prio;
        }
        (void)rt_mutex_unlock(&q->lock);
        (void)rt_sem_give(&q->space);
    }
    end(q);
    return err == 0 ? got : fail(err);
}

int mq_send(mqd_t mqd, const char *msg, size_t len, unsigned prio)
{
    return send(mqd, msg, len, prio, NULL, false);
}

int mq_timedsend(mqd_t mqd, const char *msg, size_t len, unsigned prio, const struct timespec *abstime)
{
    return send(mqd, msg, len, prio, abstime, true);
}

ssize_t mq_receive(mqd_t mqd, char *msg, size_t len, unsigned *prio)
{
    return receive(mqd, msg, len, prio, NULL, false);
}

ssize_t mq_timedreceive(mqd_t mqd, char *restrict msg, size_t len, unsigned *restrict prio,
                        const struct timespec *restrict abstime)
{
    return receive(mqd, msg, len, prio, abstime, true);
}

int mq_getattr(mqd_t mqd, struct mq_attr *attr)
{
    int flags = 0;
    struct pmq *q = begin(mqd, -1, &flags);
    if (q == NULL) {
        return -1;
    }
    if (attr != NULL) {
        (void)rt_mutex_lock(&q->lock, RT_FOREVER);
        *attr = (struct mq_attr){.mq_flags = flags & O_NONBLOCK,
                                 .mq_maxmsg = (long)q->maxmsg,
                                 .mq_msgsize = (long)q->msgsize,
                                 .mq_curmsgs = (long)q->count};
        (void)rt_mutex_unlock(&q->lock);
    }
    end(q);
    return attr == NULL ? fail(EINVAL) : 0;
}

int mq_setattr(mqd_t mqd, const struct mq_attr *restrict attr, struct mq_attr *restrict old)
{
    if (rt_in_irq()) {
        return fail(EPERM);
    }
    if (attr == NULL) {
        table_lock();
        int slot = desc_slot(mqd);
        table_unlock();
        return fail(slot < 0 ? EBADF : EINVAL);
    }
    if (old != NULL && mq_getattr(mqd, old) != 0) {
        return -1; /* EBADF */
    }
    table_lock();
    int slot = desc_slot(mqd);
    if (slot >= 0) {
        /* Only O_NONBLOCK can change; the other members are the queue's. */
        descs[slot].flags = (descs[slot].flags & ~O_NONBLOCK) | (int)(attr->mq_flags & O_NONBLOCK);
    }
    table_unlock();
    return slot < 0 ? fail(EBADF) : 0;
}

/* Notifications are not implemented: a valid descriptor gets ENOSYS, unless the call removes a
 * registration (NULL), which it never has; any other descriptor is EBADF, as the standard says. */
int mq_notify(mqd_t mqd, const struct sigevent *notification)
{
    int flags = 0;
    struct pmq *q = begin(mqd, -1, &flags);
    if (q == NULL) {
        return -1; /* EBADF (or EPERM in an interrupt handler) */
    }
    end(q);
    return notification == NULL ? 0 : fail(ENOSYS);
}
