/*
 * Event flags.
 */
#include "arch/cpu.h"
#include "kernel.h"
#include "rtos/sync.h"

static bool event_ok(const rt_event_t *e)
{
    return e != NULL && e->magic == K_MAGIC_EVENT;
}

int rt_event_init(rt_event_t *e, uint32_t initial)
{
    if (e == NULL) {
        return RT_EINVAL;
    }
    e->flags = initial;
    k_waitq_init(&e->waitq);
    e->magic = K_MAGIC_EVENT;
    return RT_OK;
}

int rt_event_set(rt_event_t *e, uint32_t bits)
{
    if (!event_ok(e)) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    k_event_post(e, bits);
    k_reschedule();
    k_unlock(f);
    return RT_OK;
}

int rt_event_clear(rt_event_t *e, uint32_t bits)
{
    if (!event_ok(e)) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    e->flags &= ~bits;
    k_unlock(f);
    return RT_OK;
}

int rt_event_get(const rt_event_t *e, uint32_t *flags)
{
    if (!event_ok(e) || flags == NULL) {
        return RT_EINVAL;
    }
    *flags = e->flags;
    return RT_OK;
}

int rt_event_wait(rt_event_t *e, uint32_t bits, unsigned options, uint32_t *observed, rt_time_t timeout)
{
    if (!event_ok(e) || bits == 0 || (options & ~(RT_EVENT_ALL | RT_EVENT_CLEAR)) != 0) {
        return RT_EINVAL;
    }
    if (!k_can_block(timeout)) {
        return RT_EPERM;
    }
    uint64_t f = k_lock();
    int ret = RT_OK;
    uint32_t seen = e->flags;
    if (k_event_satisfied(e->flags, bits, options)) {
        if (options & RT_EVENT_CLEAR) {
            e->flags &= ~bits;
        }
    } else if (timeout == RT_NO_WAIT) {
        ret = RT_EWOULDBLOCK;
    } else {
        rt_thread_t *cur = k_current();
        cur->wait.ev[K_EV_WANT] = bits;
        cur->wait.ev[K_EV_OPTS] = options;
        ret = k_block(&e->waitq, k_deadline(timeout));
        seen = cur->wait.ev[K_EV_SEEN];
    }
    k_unlock(f);
    if (ret == RT_OK && observed != NULL) {
        *observed = seen;
    }
    return ret;
}
