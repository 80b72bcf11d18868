/*
 * Minimal unit-test harness: CHECK records a failure with file/line and keeps going; main returns
 * non-zero if anything failed.
 */
#ifndef UNIT_HARNESS_H
#define UNIT_HARNESS_H

#include <stdio.h>
#include <string.h>

#include "kernel.h"

static int unit_failures;
static int unit_checks;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        unit_checks++;                                                               \
        if (!(cond)) {                                                               \
            unit_failures++;                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define UNIT_DONE(name)                                                         \
    do {                                                                        \
        printf("%s: %d checks, %d failed\n", name, unit_checks, unit_failures); \
        return unit_failures != 0;                                              \
    } while (0)

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
