/*
 * Timer queue: armed timeouts sorted by absolute deadline. Pure data structure (host-testable).
 */
#include "kernel.h"

void k_tq_init(struct k_timerq *tq)
{
    rt_list_init(&tq->list);
}

bool k_tq_insert(struct k_timerq *tq, struct k_timeout *to, uint64_t deadline)
{
    rt_list_remove(&to->node);
    to->deadline = deadline;
    /* Scan from the back: periodic and sleep deadlines mostly land late in the queue. */
    rt_list_t *pos = tq->list.prev;
    while (pos != &tq->list && RT_CONTAINER_OF(pos, struct k_timeout, node)->deadline > deadline) {
        pos = pos->prev;
    }
    rt_list_insert_before(pos->next, &to->node);
    return tq->list.next == &to->node;
}
