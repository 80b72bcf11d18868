/*
 * Wait queues: priority-ordered, FIFO within a priority. Pure data structure (host-testable).
 */
#include "kernel.h"

void k_waitq_init(struct k_waitq *wq)
{
    rt_list_init(&wq->waiters);
}

void k_waitq_insert(struct k_waitq *wq, rt_thread_t *t)
{
    K_ASSERT(t->waitq == NULL); /* a thread waits on one queue at a time */
    rt_list_t *pos = wq->waiters.next;
    while (pos != &wq->waiters && RT_CONTAINER_OF(pos, rt_thread_t, qnode)->prio >= t->prio) {
        pos = pos->next;
    }
    rt_list_insert_before(pos, &t->qnode);
    t->waitq = wq;
    /* Priority order: nobody after t is more urgent, nobody before it less urgent. */
    K_ASSERT(t->qnode.next == &wq->waiters ||
             RT_CONTAINER_OF(t->qnode.next, rt_thread_t, qnode)->prio < t->prio);
    K_ASSERT(t->qnode.prev == &wq->waiters ||
             RT_CONTAINER_OF(t->qnode.prev, rt_thread_t, qnode)->prio >= t->prio);
}
