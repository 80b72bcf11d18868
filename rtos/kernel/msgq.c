/*
 * Message queues. A blocked receiver gets a message copied straight into its buffer; a blocked sender's
 * message goes into the ring as soon as a slot frees up. Either way the woken thread finds its
 * operation complete.
 */
#include "rtos/msgq.h"
#include "kernel.h"

static bool msgq_ok(const rt_msgq_t *q)
{
    return q != NULL && q->magic == K_MAGIC_MSGQ;
}

int rt_msgq_init(rt_msgq_t *q, void *storage, size_t msg_size, size_t capacity)
{
    if (q == NULL || storage == NULL || msg_size == 0 || capacity == 0) {
        return RT_EINVAL;
    }
    k_ring_init(&q->ring, storage, msg_size, capacity);
    k_waitq_init(&q->senders);
    k_waitq_init(&q->receivers);
    q->magic = K_MAGIC_MSGQ;
    return RT_OK;
}

int rt_msgq_send(rt_msgq_t *q, const void *msg, rt_time_t timeout)
{
    if (!msgq_ok(q) || msg == NULL) {
        return RT_EINVAL;
    }
    if (!k_can_block(timeout)) {
        return RT_EPERM;
    }
    uint64_t f = k_lock();
    int ret = RT_OK;
    rt_thread_t *r = k_waitq_first(&q->receivers);
    if (r != NULL) {
        k_memcpy(r->wait.msg, msg, q->ring.msg_size);
        k_wake(r, RT_OK);
        k_reschedule();
    } else if (k_ring_put(&q->ring, msg)) {
        ret = RT_OK;
    } else if (timeout == RT_NO_WAIT) {
        ret = RT_EWOULDBLOCK;
    } else {
        rt_thread_t *cur = k_current();
        cur->wait.msg = (void *)(uintptr_t)msg;
        ret = k_block(&q->senders, k_deadline(timeout));
    }
    k_unlock(f);
    return ret;
}

int rt_msgq_recv(rt_msgq_t *q, void *msg, rt_time_t timeout)
{
    if (!msgq_ok(q) || msg == NULL) {
        return RT_EINVAL;
    }
    if (!k_can_block(timeout)) {
        return RT_EPERM;
    }
    uint64_t f = k_lock();
    int ret = RT_OK;
    if (k_ring_get(&q->ring, msg)) {
        rt_thread_t *s = k_waitq_first(&q->senders);
        if (s != NULL) {
            (void)k_ring_put(&q->ring, s->wait.msg); /* a slot just freed up */
            k_wake(s, RT_OK);
            k_reschedule();
        }
    } else if (timeout == RT_NO_WAIT) {
        ret = RT_EWOULDBLOCK;
    } else {
        rt_thread_t *cur = k_current();
        cur->wait.msg = msg;
        ret = k_block(&q->receivers, k_deadline(timeout));
    }
    k_unlock(f);
    return ret;
}

int rt_msgq_count(const rt_msgq_t *q, size_t *count)
{
    if (!msgq_ok(q) || count == NULL) {
        return RT_EINVAL;
    }
    *count = q->ring.count;
    return RT_OK;
}
