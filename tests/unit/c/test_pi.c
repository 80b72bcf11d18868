/*
 * Priority-inheritance bookkeeping: transitive boosts through a 3-level chain, unwinding when a waiter
 * leaves, requeueing in the ready queue and in wait queues, lock-cycle detection.
 */
#include "harness.h"

static struct k_readyq rq;

static void own(rt_thread_t *t, rt_mutex_t *m)
{
    m->owner = t;
    rt_list_append(&t->owned_mutexes, &m->owner_node);
}

static void mutex(rt_mutex_t *m)
{
    memset(m, 0, sizeof(*m));
    rt_list_init(&m->owner_node);
    k_waitq_init(&m->waitq);
}

/* What k_block does for a mutex waiter, minus the switch. */
static void block_on(rt_thread_t *t, rt_mutex_t *m)
{
    k_rq_remove(&rq, t);
    t->state = K_THREAD_BLOCKED;
    t->wait_mutex = m;
    k_waitq_insert(&m->waitq, t);
    k_pi_update(&rq, m->owner);
}

/* What k_wake does on a timeout. */
static void time_out(rt_thread_t *t)
{
    rt_mutex_t *m = t->wait_mutex;
    k_waitq_remove(t);
    t->wait_mutex = NULL;
    t->state = K_THREAD_READY;
    k_rq_add_tail(&rq, t);
    k_pi_update(&rq, m->owner);
}

int main(void)
{
    static rt_thread_t low, mid, high, high2, other;
    static rt_mutex_t m1, m2;
    k_rq_init(&rq);
    unit_thread(&low, "low", 10);
    unit_thread(&mid, "mid", 20);
    unit_thread(&high, "high", 30);
    unit_thread(&high2, "high2", 40);
    unit_thread(&other, "other", 20);
    rt_thread_t *all[] = {&low, &mid, &high, &high2, &other};
    for (unsigned i = 0; i < 5; i++) {
        all[i]->state = K_THREAD_READY;
        k_rq_add_tail(&rq, all[i]);
    }
    mutex(&m1);
    mutex(&m2);
    own(&low, &m1);
    own(&mid, &m2);

    block_on(&mid, &m1);
    CHECK(low.prio == 20 && low.base_prio == 10);
    /* low now queues behind `other`, which was at level 20 first. */
    k_rq_remove(&rq, &high);
    k_rq_remove(&rq, &high2);
    CHECK(k_rq_best(&rq) == &other);

    high.state = K_THREAD_READY;
    k_rq_add_tail(&rq, &high);
    block_on(&high, &m2);
    CHECK(mid.prio == 30 && low.prio == 30);
    CHECK(k_rq_best(&rq) == &low);

    /* A second, more urgent waiter on m2 goes to the front of m2's queue and boosts the chain. */
    high2.state = K_THREAD_READY;
    k_rq_add_tail(&rq, &high2);
    block_on(&high2, &m2);
    CHECK(k_waitq_first(&m2.waitq) == &high2);
    CHECK(mid.prio == 40 && low.prio == 40);

    /* The urgent waiter times out: the chain drops back to what the remaining waiter lends. */
    time_out(&high2);
    CHECK(mid.prio == 30 && low.prio == 30);
    k_rq_remove(&rq, &high2);

    /* Raising a blocked waiter's base priority re-sorts it and travels down the chain. */
    high.base_prio = 35;
    k_pi_update(&rq, &high);
    CHECK(high.prio == 35 && mid.prio == 35 && low.prio == 35);

    /* Lock cycle: low (owner of m1, which mid waits for) asking for m2 (owned by mid) deadlocks. */
    CHECK(k_pi_would_deadlock(&m2, &low));
    CHECK(!k_pi_would_deadlock(&m1, &other));
    CHECK(k_pi_would_deadlock(&m1, &low)); /* relocking one's own mutex */

    /* All waiters gone: everyone back to base. */
    time_out(&high);
    CHECK(mid.prio == 20 && low.prio == 20);
    time_out(&mid);
    CHECK(low.prio == 10);
    CHECK(k_rq_best(&rq) == &high);
    UNIT_DONE("pi");
}
