/*
 * Unit-test harness of the rtos's pure kernel modules: the checks, and thread objects for them.
 */
#ifndef UNIT_HARNESS_H
#define UNIT_HARNESS_H

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernel.h"

/* The kernel's assertions are on in the host tests (K_ASSERTS=1): a false one aborts the test. */
void k_assert_failed(const char *file, int line, const char *cond)
{
    fprintf(stderr, "%s:%d: K_ASSERT failed: %s\n", file, line, cond);
    abort();
}

/* A thread object good enough for the pure modules. */
static inline void unit_thread(rt_thread_t *t, const char *name, uint8_t prio)
{
    memset(t, 0, sizeof(*t));
    t->name = name;
    t->base_prio = prio;
    t->prio = prio;
    rt_list_init(&t->qnode);
    rt_list_init(&t->owned_mutexes);
    rt_list_init(&t->timeout.node);
}

#endif /* UNIT_HARNESS_H */
