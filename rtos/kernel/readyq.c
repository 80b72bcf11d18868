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
