/*
 * Mutexes with transitive priority inheritance (see pi.c for the invariant).
 */
#include "kernel.h"
#include "rtos/sync.h"

static bool mutex_ok(const rt_mutex_t *m)
{
    return m != NULL && m->magic == K_MAGIC_MUTEX;
}

int rt_mutex_init(rt_mutex_t *m)
{
    if (m == NULL) {
        return RT_EINVAL;
    }
    m->owner = NULL;
    rt_list_init(&m->owner_node);
    k_waitq_init(&m->waitq);
    m->magic = K_MAGIC_MUTEX;
    return RT_OK;
}

int rt_mutex_lock(rt_mutex_t *m, rt_time_t timeout)
{
    if (!mutex_ok(m)) {
        return RT_EINVAL;
    }
    if (rt_in_irq() || !k_cpu.started) {
        return RT_EPERM;
    }
    uint64_t f = k_lock();
    rt_thread_t *cur = k_current();
    int ret = RT_OK;
    if (m->owner == NULL) {
        m->owner = cur;
        rt_list_append(&cur->owned_mutexes, &m->owner_node);
    } else if (k_pi_would_deadlock(m, cur)) {
        ret = RT_EDEADLK;
    } else if (timeout == RT_NO_WAIT) {
        ret = RT_EWOULDBLOCK;
    } else {
        /* k_block queues us on m and lends our priority down the owner chain. */
        cur->wait_mutex = m;
        ret = k_block(&m->waitq, k_deadline(timeout));
        /* On success the unlocker made us the owner (see rt_mutex_unlock). */
    }
    k_unlock(f);
    return ret;
}

int rt_mutex_unlock(rt_mutex_t *m)
{
    if (!mutex_ok(m)) {
        return RT_EINVAL;
    }
    if (rt_in_irq()) {
        return RT_EPERM;
    }
    uint64_t f = k_lock();
    rt_thread_t *cur = k_current();
    if (m->owner != cur) {
        k_unlock(f);
        return RT_EPERM;
    }
    rt_list_remove(&m->owner_node);
    rt_thread_t *w = k_waitq_first(&m->waitq);
    m->owner = w;
    if (w != NULL) {
        /* Direct hand-over: the most urgent waiter owns the mutex before it even runs. */
        rt_list_append(&w->owned_mutexes, &m->owner_node);
        k_wake(w, RT_OK);
    }
    k_pi_update(&k_cpu.rq, cur); /* drop what m's waiters lent us */
    k_reschedule();
    k_unlock(f);
    return RT_OK;
}

rt_thread_t *rt_mutex_owner(const rt_mutex_t *m)
{
    return mutex_ok(m) ? m->owner : NULL;
}
