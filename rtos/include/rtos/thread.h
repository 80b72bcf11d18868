/*
 * Threads: fixed priorities, preemptive, FIFO within a priority, optional round-robin slice.
 */
#ifndef RTOS_THREAD_H
#define RTOS_THREAD_H

#include <stddef.h>
#include <stdint.h>

#include "rtos/kobj.h"
#include "rtos/types.h"

/* Priorities: higher number = more urgent. 0 belongs to the idle thread. */
#define RT_PRIO_LEVELS 256
#define RT_PRIO_IDLE   0
#define RT_PRIO_MIN    1
#define RT_PRIO_MAX    255

/*
 * The lowest RT_STACK_GUARD bytes of every stack hold a known pattern, checked, with the thread's
 * stack pointer of that moment, at every switch away from the thread and when it ends. A stack smaller than
 * RT_STACK_MIN is refused: it must hold the guard, one exception frame (272 bytes) and a little C.
 */
#define RT_STACK_GUARD 256u
#define RT_STACK_MIN   2048u

/* Declares a static, suitably aligned stack. */
#define RT_STACK_DEFINE(name, size) static uint8_t name[size] __attribute__((aligned(16)))

typedef void (*rt_entry_t)(void *arg);

/*
 * Creates a thread and makes it ready; it runs at once if it is more urgent than the caller.
 * Returns RT_EINVAL for a NULL thread/entry/stack, a stack below RT_STACK_MIN (plus the thread-local
 * storage of an image linked with the C library: arch_tls_reserve) or a priority outside
 * RT_PRIO_MIN..RT_PRIO_MAX, RT_EBUSY if the thread object is alive, RT_EPERM from an interrupt.
 */
int rt_thread_create(rt_thread_t *t, const char *name, rt_entry_t entry, void *arg, void *stack,
                     size_t stack_size, unsigned prio);

/* The calling thread. */
rt_thread_t *rt_thread_self(void);
const char *rt_thread_name(const rt_thread_t *t);

/* Base priority; the effective one can be higher while the thread holds a contended mutex. A ready
 * thread whose effective priority is lowered goes to the head of its new level (POSIX's
 * pthread_setschedprio); one whose priority is raised goes to the tail, except the running thread,
 * which keeps the CPU among its new equals. */
int rt_thread_set_priority(rt_thread_t *t, unsigned prio);
int rt_thread_get_priority(const rt_thread_t *t, unsigned *base, unsigned *effective);

/* Round-robin among equal priorities: after slice ns of running, the thread goes behind its peers
 * with a new slice. The time counts while it runs: preempted by a more urgent thread, it keeps its
 * place at the head of its level and the rest of its slice (POSIX SCHED_RR); after it blocks or
 * yields, its next turn has a whole slice. 0 disables (the default); a slice too long for the counter
 * (RT_FOREVER) is no slice. */
int rt_thread_set_timeslice(rt_thread_t *t, rt_time_t slice);

/* Puts the caller behind the other ready threads of its priority. */
void rt_thread_yield(void);

/* Ends the calling thread (returning from the entry function does the same); its stack is checked a
 * last time first. From an interrupt handler it is a fatal error (a FATAL line, the system stops):
 * the handler runs on the interrupted thread's stack and has no thread of its own to end. */
void rt_thread_exit(void) __attribute__((noreturn));

/* Waits until t has ended. RT_ETIMEDOUT/RT_EWOULDBLOCK per timeout. */
int rt_thread_join(rt_thread_t *t, rt_time_t timeout);

/*
 * When t ends, however it ends (its entry returns, rt_thread_exit, the fault hook kills it), `bits` are
 * set in `e` as rt_event_set would: for a thread that waits for t's end and for other things at once.
 * One registration per thread (a new one replaces it; e NULL removes it). If t has ended already (or
 * was never created) the bits are set at once. RT_EINVAL for a NULL thread, a bad event or no bits.
 */
struct rt_event;
int rt_thread_on_exit(rt_thread_t *t, struct rt_event *e, uint32_t bits);

/* Whether t has ended (or was never created). */
int rt_thread_is_dead(const rt_thread_t *t);

/* Number of times t has been switched to (for tests and statistics). */
uint64_t rt_thread_switch_count(const rt_thread_t *t);

/*
 * CPU time of t (NULL: the caller) in ns: the time it ran, from each switch to it to the next switch
 * away, plus its current turn if it is running. Interrupts have no thread of their own: their time
 * counts for the thread they interrupted. Exact to the counter's tick (one read of the counter and
 * one addition at each switch). A thread created again starts from 0; a dead one keeps its total.
 */
rt_time_t rt_thread_cpu_time(const rt_thread_t *t);

/* The idle thread's CPU time (ns): the time since boot that no thread of the application used. */
rt_time_t rt_cpu_idle_time(void);

/*
 * Statistics of every live thread, for tools like rtmux-top (docs/tracing.md). The kernel lists the
 * threads alive in a table of RT_THREADS_MAX entries; a thread created while it is full runs as any
 * other but is not listed (rt_thread_stats_unlisted counts them). Each entry is read under the kernel
 * lock in a bounded time (one thread's counters copied), so a reader delays no more urgent thread more
 * than any kernel call does; the stack's high-water mark is measured afterwards, without the lock.
 */
#define RT_THREADS_MAX 64u

enum rt_thread_run_state {
    RT_THREAD_RUNNING = 0, /* the thread calling rt_thread_stats_get */
    RT_THREAD_READY = 1,   /* ready, preempted by a more urgent one */
    RT_THREAD_BLOCKED = 2, /* waiting: for an object, a timeout, its next period */
};

struct rt_thread_stats {
    uint32_t id;                    /* unique since boot (the trace names threads by it) */
    const char *name;               /* as given to rt_thread_create */
    uint8_t base_prio, prio, state; /* state: enum rt_thread_run_state */
    uint64_t cpu_ns;                /* rt_thread_cpu_time */
    uint64_t switches;              /* times switched to */
    uint64_t wakeups;               /* times made ready from blocked */
    uint64_t worst_wake_ns;         /* longest from being made ready (from its deadline, when a timeout or a
                                       period woke it) to running, since it was created */
    uint64_t stack_size;            /* bytes */
    uint64_t stack_used;            /* high-water mark: bytes from the top of the stack ever written */
};

/* The thread in table entry `slot` (0..RT_THREADS_MAX-1). RT_OK; RT_ENOENT: no live thread there;
 * RT_EINVAL: slot out of range or out NULL. */
int rt_thread_stats_get(unsigned slot, struct rt_thread_stats *out);
/* Threads alive now that the table could not list. */
unsigned rt_thread_stats_unlisted(void);

#endif /* RTOS_THREAD_H */
