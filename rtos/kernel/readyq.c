/*
 * Ready queue: O(1) selection of the most urgent ready thread. Pure data structure (host-testable).
 */
#include "kernel.h"

void k_rq_init(struct k_readyq *rq)
{
    rq->summary = 0;
    for (unsigned w = 0; w < K_PRIO_WORDS; w++) {
        rq->bits[w] = 0;
    }
    for (unsigned p = 0; p < 256; p++) {
        rt_list_init(&rq->level[p]);
    }
    rq->current = NULL;
}

/* The bitmap agrees with the queues: bit p set <=> level p non-empty; summary bit w <=> word w != 0. */
static inline bool consistent(const struct k_readyq *rq, unsigned prio)
{
    bool bit = ((rq->bits[prio / 64] >> (prio % 64)) & 1u) != 0;
    bool word = ((rq->summary >> (prio / 64)) & 1u) != 0;
    return bit == !rt_list_empty(&rq->level[prio]) && word == (rq->bits[prio / 64] != 0);
}

static void mark(struct k_readyq *rq, unsigned prio)
{
    rq->bits[prio / 64] |= 1ull << (prio % 64);
    rq->summary |= 1ull << (prio / 64);
    K_ASSERT(consistent(rq, prio));
}

void k_rq_add_tail(struct k_readyq *rq, rt_thread_t *t)
{
    rt_list_append(&rq->level[t->prio], &t->qnode);
    mark(rq, t->prio);
}

void k_rq_add_head(struct k_readyq *rq, rt_thread_t *t)
{
    rt_list_prepend(&rq->level[t->prio], &t->qnode);
    mark(rq, t->prio);
}

void k_rq_remove(struct k_readyq *rq, rt_thread_t *t)
{
    unsigned prio = t->prio;
    rt_list_remove(&t->qnode);
    if (rt_list_empty(&rq->level[prio])) {
        rq->bits[prio / 64] &= ~(1ull << (prio % 64));
        if (rq->bits[prio / 64] == 0) {
            rq->summary &= ~(1ull << (prio / 64));
        }
    }
    K_ASSERT(consistent(rq, prio));
}

rt_thread_t *k_rq_best(const struct k_readyq *rq)
{
    if (rq->summary == 0) {
        return NULL;
    }
    unsigned w = 63u - (unsigned)__builtin_clzll(rq->summary);
    unsigned prio = w * 64u + 63u - (unsigned)__builtin_clzll(rq->bits[w]);
    K_ASSERT(consistent(rq, prio) && !rt_list_empty(&rq->level[prio]));
    return RT_CONTAINER_OF(rq->level[prio].next, rt_thread_t, qnode);
}
