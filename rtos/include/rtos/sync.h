/*
 * Synchronisation: counting semaphores, mutexes with transitive priority inheritance, event flags.
 * Every blocking call takes a timeout (RT_NO_WAIT, a duration in ns, or RT_FOREVER). Calls that can
 * block return RT_EPERM from an interrupt handler unless the timeout is RT_NO_WAIT.
 */
#ifndef RTOS_SYNC_H
#define RTOS_SYNC_H

#include <stdint.h>

#include "rtos/kobj.h"
#include "rtos/types.h"

/* ---- semaphores: safe to give from interrupt handlers ---- */
int rt_sem_init(rt_sem_t *s, uint32_t initial, uint32_t max);
int rt_sem_take(rt_sem_t *s, rt_time_t timeout);
int rt_sem_give(rt_sem_t *s); /* RT_EOVERFLOW at max */
int rt_sem_count(const rt_sem_t *s, uint32_t *count);

/*
 * ---- mutexes: owner-only unlock, not recursive (relocking returns RT_EDEADLK), priority
 * inheritance through chains of blocked owners. Not usable from interrupt handlers.
 * A mutex whose owner ends while holding it (returns, exits, or is killed by the fault hook) goes to
 * its first waiter, whose rt_mutex_lock returns RT_OK, or becomes free. There is no "owner died"
 * result (unlike POSIX's robust mutexes): what the mutex protected may be half updated, and an
 * application whose threads may die holding one must check that state itself.
 */
int rt_mutex_init(rt_mutex_t *m);
int rt_mutex_lock(rt_mutex_t *m, rt_time_t timeout);
int rt_mutex_unlock(rt_mutex_t *m);
rt_thread_t *rt_mutex_owner(const rt_mutex_t *m);

/* ---- event flags: 32 bits; set/clear safe from interrupt handlers ---- */
#define RT_EVENT_ANY   0u        /* wake when any wanted bit is set */
#define RT_EVENT_ALL   (1u << 0) /* wake when all wanted bits are set */
#define RT_EVENT_CLEAR (1u << 1) /* consume the wanted bits on wake-up */

int rt_event_init(rt_event_t *e, uint32_t initial);
int rt_event_set(rt_event_t *e, uint32_t bits);
int rt_event_clear(rt_event_t *e, uint32_t bits);
int rt_event_get(const rt_event_t *e, uint32_t *flags);
/* *observed (optional) receives the flags that satisfied the wait (before any clearing). */
int rt_event_wait(rt_event_t *e, uint32_t bits, unsigned options, uint32_t *observed, rt_time_t timeout);

#endif /* RTOS_SYNC_H */
