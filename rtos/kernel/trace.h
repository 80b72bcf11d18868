/*
 * The scheduler trace's recording (rtos/trace.h): the ring's layout, which tools/rtmux/formats/
 * rtos_trace.py reads out of the rtos's memory, and the inline hook every recording place calls.
 */
#ifndef RTOS_KERNEL_TRACE_H
#define RTOS_KERNEL_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "arch/cpu.h"
#include "kernel.h"
#include "rtos/thread.h"
#include "rtos/trace.h"

_Static_assert((RT_TRACE_EVENTS & (RT_TRACE_EVENTS - 1u)) == 0 && RT_TRACE_EVENTS >= 64u,
               "RT_TRACE_EVENTS: a power of two, at least 64");

/* One event. `word`: bits 0-7 the type (K_TR_*), 8-15 a priority or nesting level, 16-31 a small
 * argument; `arg`: a thread's id, or a marker's value. */
struct k_trace_ev {
    uint64_t ts; /* the generic counter (CNTVCT_EL0) */
    uint32_t word;
    uint32_t arg;
};

enum k_trace_type {
    K_TR_SWITCH = 1, /* arg: the thread switched to; prio: its priority; small: K_TR_LEFT_* */
    K_TR_WAKE = 2,   /* arg: the thread made ready; prio: its priority; small: K_TR_BY_* */
    K_TR_IRQ_IN = 3, /* small: the INTID; prio: the nesting level (0 outermost) */
    K_TR_IRQ_OUT = 4,
    K_TR_MARK = 5, /* small: the marker's id; arg: its value */
};

/* Why the thread switched away from left the CPU (its state at the switch). */
enum { K_TR_LEFT_PREEMPTED = 0, K_TR_LEFT_BLOCKED = 1, K_TR_LEFT_ENDED = 2 };
/* What made a thread ready. */
enum { K_TR_BY_TIMEOUT = 1, K_TR_BY_THREAD = 2, K_TR_BY_IRQ = 3, K_TR_BY_CREATE = 4 };

/* A thread's name as the trace's reader sees it: the table keeps the last RT_THREADS_MAX created. */
#define K_TRACE_NAME 24u
struct k_trace_name {
    uint32_t id;
    uint8_t prio; /* base priority at creation */
    uint8_t pad[3];
    char name[K_TRACE_NAME]; /* NUL-terminated, cut to fit */
};

#define K_TRACE_MAGIC   0x3145434152545452ull /* "RTTRACE1" */
#define K_TRACE_VERSION 1u

/*
 * What the tools read (symbol k_trace_ring; offsets fixed by the asserts below and mirrored in
 * tools/rtmux/formats/rtos_trace.py). The ring has no write index in memory: events are written in
 * timestamp order (every recording place runs with IRQs masked), so the newest is the one before the
 * first whose timestamp goes back, or before the first never written (ts 0).
 */
struct k_trace_buf {
    uint64_t magic;
    uint32_t version;
    uint32_t nevents;                          /* RT_TRACE_EVENTS */
    uint64_t freq;                             /* counter frequency, Hz */
    uint32_t nnames;                           /* RT_THREADS_MAX */
    uint32_t on;                               /* recording now */
    struct k_trace_name names[RT_THREADS_MAX]; /* by thread id modulo RT_THREADS_MAX */
    struct k_trace_ev ev[RT_TRACE_EVENTS];
};
_Static_assert(sizeof(struct k_trace_ev) == 16, "event layout (tools/rtmux/formats/rtos_trace.py)");
_Static_assert(sizeof(struct k_trace_name) == 32, "name layout (tools/rtmux/formats/rtos_trace.py)");
_Static_assert(offsetof(struct k_trace_buf, names) == 32,
               "header layout (tools/rtmux/formats/rtos_trace.py)");

extern struct k_trace_buf k_trace_ring;

/* Whether the trace records now. */
static inline bool k_trace_on(void)
{
    return __builtin_expect(k_cpu.trace_ev != NULL, 0);
}

/* Records one event; the caller holds the kernel lock (IRQs masked), which keeps the ring in timestamp
 * order. Off (k_cpu.trace_ev NULL): one load and one branch. */
static inline __attribute__((always_inline)) void k_trace(unsigned type, unsigned prio, unsigned small,
                                                          uint32_t arg)
{
    struct k_trace_ev *ev = k_cpu.trace_ev;
    if (__builtin_expect(ev != NULL, 0)) {
        uint32_t i = k_cpu.trace_pos;
        k_cpu.trace_pos = i + 1u;
        ev += i & (RT_TRACE_EVENTS - 1u);
        ev->ts = arch_counter_nosync();
        ev->word = (uint32_t)(type | (prio << 8) | (small << 16));
        ev->arg = arg;
    }
}

/* A new thread's name into the table (thread.c, lock held). */
void k_trace_name(const rt_thread_t *t);
/* The header for the tools, and recording from now on if `on` (boot.c: the boot argument trace=1). */
void k_trace_init(bool on);

#endif /* RTOS_KERNEL_TRACE_H */
