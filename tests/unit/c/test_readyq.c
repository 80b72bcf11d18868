/*
 * Ready queue: most urgent first across all 256 levels, FIFO within a level, bitmap kept exact.
 */
#include "harness.h"

int main(void)
{
    static struct k_readyq rq;
    static rt_thread_t t[300];
    k_rq_init(&rq);
    CHECK(k_rq_best(&rq) == NULL);

    /* Every level, added in a scrambled order: best is always the highest level present. */
    for (unsigned i = 0; i < 256; i++) {
        unsigned p = (i * 97u) % 256u; /* 97 is odd, so this visits every level once */
        unit_thread(&t[p], "t", (uint8_t)p);
        k_rq_add_tail(&rq, &t[p]);
    }
    for (int p = 255; p >= 0; p--) {
        CHECK(k_rq_best(&rq) == &t[p]);
        k_rq_remove(&rq, &t[p]);
    }
    CHECK(k_rq_best(&rq) == NULL);
    CHECK(rq.summary == 0);
    for (unsigned w = 0; w < K_PRIO_WORDS; w++) {
        CHECK(rq.bits[w] == 0);
    }

    /* FIFO within a level, head insertion for the running thread. */
    for (unsigned i = 0; i < 4; i++) {
        unit_thread(&t[i], "f", 64);
        k_rq_add_tail(&rq, &t[i]);
    }
    CHECK(k_rq_best(&rq) == &t[0]);
    k_rq_remove(&rq, &t[0]);
    k_rq_add_tail(&rq, &t[0]); /* yield */
    CHECK(k_rq_best(&rq) == &t[1]);
    k_rq_add_head(&rq, &t[299]); /* uninitialised prio 0 is fine: only the level matters */
    unit_thread(&t[298], "h", 64);
    k_rq_add_head(&rq, &t[298]);
    CHECK(k_rq_best(&rq) == &t[298]);

    /* Removing the last thread of a level clears only that level's bit. */
    unit_thread(&t[297], "x", 63);
    k_rq_add_tail(&rq, &t[297]);
    unit_thread(&t[296], "y", 65);
    k_rq_add_tail(&rq, &t[296]);
    k_rq_remove(&rq, &t[296]);
    CHECK(k_rq_best(&rq) == &t[298]);
    CHECK((rq.bits[1] & 1u) != 0);   /* level 64 */
    CHECK((rq.bits[0] >> 63) == 1u); /* level 63 */
    CHECK((rq.bits[1] & 2u) == 0);   /* level 65 gone */
    UNIT_DONE("readyq");
}
