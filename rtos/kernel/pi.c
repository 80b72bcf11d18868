/*
 * Priority inheritance. Invariant after every kernel operation: a thread's effective priority is the
 * maximum of its base priority and the effective priorities of all threads blocked on mutexes it owns.
 * Pure logic over the ready queue and wait queues (host-testable).
 */
#include "kernel.h"

void k_thread_reprio(struct k_readyq *rq, rt_thread_t *t, uint8_t prio)
{
    if (t->prio == prio) {
        return;
    }
    if (t->state == K_THREAD_READY) {
        bool lowered = prio < t->prio;
        k_rq_remove(rq, t);
        t->prio = prio;
        /* Lowered: the head of its new level, as POSIX's pthread_setschedprio has it (a thread that
         * lowers itself for a while, or whose inherited priority ends, is not sent behind the threads
         * it was ahead of). Raised: the running thread keeps the CPU among its new equals; another
         * queues behind them. */
        if (lowered || t == rq->current) {
            k_rq_add_head(rq, t);
        } else {
            k_rq_add_tail(rq, t);
        }
    } else if (t->state == K_THREAD_BLOCKED && t->waitq != NULL) {
        struct k_waitq *wq = t->waitq;
        k_waitq_remove(t);
        t->prio = prio;
        k_waitq_insert(wq, t);
    } else {
        t->prio = prio;
    }
}

static uint8_t inherited_prio(const rt_thread_t *t)
{
    uint8_t p = t->base_prio;
    for (const rt_list_t *n = t->owned_mutexes.next; n != &t->owned_mutexes; n = n->next) {
        const rt_mutex_t *m = RT_CONTAINER_OF(n, rt_mutex_t, owner_node);
        const rt_thread_t *w = k_waitq_first(&m->waitq);
        if (w != NULL && w->prio > p) {
            p = w->prio;
        }
    }
    return p;
}

void k_pi_update(struct k_readyq *rq, rt_thread_t *t)
{
    /* Each step moves one link down a chain of blocked owners; the chain is acyclic because
     * rt_mutex_lock refuses to block when it would close a cycle (k_pi_would_deadlock). */
    while (t != NULL) {
        uint8_t p = inherited_prio(t);
        if (p == t->prio) {
            return;
        }
        k_thread_reprio(rq, t, p);
        if (t->state != K_THREAD_BLOCKED || t->wait_mutex == NULL) {
            return;
        }
        t = t->wait_mutex->owner;
    }
}

bool k_pi_would_deadlock(const rt_mutex_t *m, const rt_thread_t *t)
{
    const rt_thread_t *owner = m->owner;
    while (owner != NULL) {
        if (owner == t) {
            return true;
        }
        if (owner->state != K_THREAD_BLOCKED || owner->wait_mutex == NULL) {
            return false;
        }
        owner = owner->wait_mutex->owner;
    }
    return false;
}
