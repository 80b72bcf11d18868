/*
 * Timer queue: sorted by deadline, FIFO among equal deadlines, head reported, expiry in order.
 */
#include "harness.h"

static unsigned lcg(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return 10u + (*s >> 8) % 1000u; /* >= 10: deadline 0 below stays unique */
}

int main(void)
{
    static struct k_timerq tq;
    static struct k_timeout to[200];
    static unsigned seq[200]; /* insertion sequence number of each timeout */
    unsigned next_seq = 0;
    k_tq_init(&tq);
    CHECK(k_tq_first(&tq) == NULL);
    CHECK(k_tq_pop_expired(&tq, UINT64_MAX) == NULL);

    unsigned seed = 1;
    uint64_t earliest = UINT64_MAX;
    for (unsigned i = 0; i < 200; i++) {
        rt_list_init(&to[i].node);
        uint64_t d = lcg(&seed);
        bool head = k_tq_insert(&tq, &to[i], d);
        seq[i] = next_seq++;
        CHECK(head == (d < earliest));
        if (d < earliest) {
            earliest = d;
        }
    }
    /* Re-arming an armed timeout moves it (no duplicate). */
    CHECK(k_tq_insert(&tq, &to[5], 0));
    seq[5] = next_seq++;
    CHECK(k_tq_first(&tq) == &to[5]);

    uint64_t last = 0;
    unsigned n = 0;
    struct k_timeout *prev = NULL;
    struct k_timeout *t;
    while ((t = k_tq_pop_expired(&tq, 500)) != NULL) {
        CHECK(t->deadline >= last);
        if (prev != NULL && t->deadline == prev->deadline) {
            CHECK(seq[t - to] > seq[prev - to]); /* FIFO among equal deadlines */
        }
        last = t->deadline;
        prev = t;
        n++;
    }
    CHECK(k_tq_first(&tq) == NULL || k_tq_first(&tq)->deadline > 500);
    while ((t = k_tq_pop_expired(&tq, UINT64_MAX)) != NULL) {
        CHECK(t->deadline >= last);
        last = t->deadline;
        n++;
    }
    CHECK(n == 200);

    /* Equal deadlines keep insertion order; removal from the middle keeps the rest sorted. */
    for (unsigned i = 0; i < 5; i++) {
        rt_list_init(&to[i].node);
        (void)k_tq_insert(&tq, &to[i], 42);
    }
    k_tq_remove(&to[2]);
    k_tq_remove(&to[2]); /* twice is harmless */
    unsigned order[] = {0, 1, 3, 4};
    for (unsigned i = 0; i < 4; i++) {
        CHECK(k_tq_pop_expired(&tq, 42) == &to[order[i]]);
    }
    CHECK(k_tq_first(&tq) == NULL);
    UNIT_DONE("timeq");
}
