/*
 * Counting semaphores.
 */
#include "kernel.h"
#include "rtos/sync.h"

static bool sem_ok(const rt_sem_t *s)
{
    return s != NULL && s->magic == K_MAGIC_SEM;
}

int rt_sem_init(rt_sem_t *s, uint32_t initial, uint32_t max)
{
    if (s == NULL || max == 0 || initial > max) {
        return RT_EINVAL;
    }
    s->count = initial;
    s->max = max;
    k_waitq_init(&s->waitq);
    s->magic = K_MAGIC_SEM;
    return RT_OK;
}

int rt_sem_take(rt_sem_t *s, rt_time_t timeout)
{
    if (!sem_ok(s)) {
        return RT_EINVAL;
    }
    if (!k_can_block(timeout)) {
        return RT_EPERM;
    }
    uint64_t f = k_lock();
    int ret = RT_OK;
    if (s->count > 0) {
        s->count--;
    } else if (timeout == RT_NO_WAIT) {
        ret = RT_EWOULDBLOCK;
    } else {
        /* A give hands the unit straight to the first waiter: count is not touched on wake-up. */
        ret = k_block(&s->waitq, k_deadline(timeout));
    }
    k_unlock(f);
    return ret;
}

int rt_sem_give(rt_sem_t *s)
{
    if (!sem_ok(s)) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    int ret = RT_OK;
    rt_thread_t *w = k_waitq_first(&s->waitq);
    if (w != NULL) {
        k_wake(w, RT_OK);
        k_reschedule();
    } else if (s->count < s->max) {
        s->count++;
    } else {
        ret = RT_EOVERFLOW;
    }
    k_unlock(f);
    return ret;
}

int rt_sem_count(const rt_sem_t *s, uint32_t *count)
{
    if (!sem_ok(s) || count == NULL) {
        return RT_EINVAL;
    }
    *count = s->count;
    return RT_OK;
}
