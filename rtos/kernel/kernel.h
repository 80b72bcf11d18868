/*
 * Kernel-internal interface (k_ prefix). Not for applications.
 *
 * Locking: the rtos runs on one core, so every kernel data structure is protected by masking IRQs
 * (k_lock/k_unlock), in threads and in interrupt handlers alike: a handler runs with IRQs unmasked and a
 * more urgent one may nest in it (irq.c), so a handler that touches kernel state takes the lock too. A
 * thread switch only happens with IRQs masked, either from a kernel call (k_reschedule) or at the
 * outermost interrupt's exit (k_irq_exit); a nested level never switches (k_reschedule defers while
 * irq_nest > 0).
 */
#ifndef RTOS_KERNEL_H
#define RTOS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtos/irq.h"
#include "rtos/kobj.h"
#include "rtos/list.h"
#include "rtos/sync.h"
#include "rtos/system.h"
#include "rtos/thread.h"

#define K_MAGIC_THREAD 0x54687264u /* "Thrd" */
#define K_MAGIC_SEM    0x53656d61u /* "Sema" */
#define K_MAGIC_MUTEX  0x4d757478u /* "Mutx" */
#define K_MAGIC_MSGQ   0x4d736751u /* "MsgQ" */
#define K_MAGIC_EVENT  0x45766e74u /* "Evnt" */
#define K_MAGIC_CHAN   0x4368616eu /* "Chan" */

/*
 * K_ASSERT(cond): an invariant the kernel relies on. With K_ASSERTS=1 (the selftest image and the host
 * unit tests) a false one stops the system naming file and line; otherwise it compiles to nothing, so
 * the images that are measured run exactly the code they would without it.
 */
#if defined(K_ASSERTS) && K_ASSERTS
#define K_ASSERT(cond) ((cond) ? (void)0 : k_assert_failed(__FILE__, __LINE__, #cond))
#else
#define K_ASSERT(cond) ((void)0)
#endif
void k_assert_failed(const char *file, int line, const char *cond) __attribute__((noreturn));

#define K_PRIO_WORDS  (256 / 64)
#define K_TICKS_NEVER UINT64_MAX

/* ---------------- ready queue (readyq.c, pure) ----------------
 * One FIFO per priority and a two-level bitmap (a summary word over 4 words of 64 bits), so the most
 * urgent ready thread is found with two count-leading-zeros: O(1) whatever the number of threads.
 * The running thread stays in the queue, at the head of its level.
 */
struct k_readyq {
    uint64_t summary;            /* bit w set <=> bits[w] != 0 */
    uint64_t bits[K_PRIO_WORDS]; /* bit p%64 of word p/64 set <=> level p non-empty */
    rt_list_t level[256];
    rt_thread_t *current; /* running thread; a priority change keeps it at the head */
};

void k_rq_init(struct k_readyq *rq);
/* Inline below (they are every switch's path): k_rq_add_tail, k_rq_add_head, k_rq_remove, and
 * k_rq_best, the most urgent ready thread or NULL if none. */
/* The bitmap agrees with the queues: bit p set <=> level p non-empty; summary bit w <=> word w != 0. */
static inline bool k_rq_consistent(const struct k_readyq *rq, unsigned prio)
{
    bool bit = ((rq->bits[prio / 64] >> (prio % 64)) & 1u) != 0;
    bool word = ((rq->summary >> (prio / 64)) & 1u) != 0;
    return bit == !rt_list_empty(&rq->level[prio]) && word == (rq->bits[prio / 64] != 0);
}

static inline void k_rq_mark(struct k_readyq *rq, unsigned prio)
{
    rq->bits[prio / 64] |= 1ull << (prio % 64);
    rq->summary |= 1ull << (prio / 64);
    K_ASSERT(k_rq_consistent(rq, prio));
}

static inline void k_rq_add_tail(struct k_readyq *rq, rt_thread_t *t)
{
    rt_list_append(&rq->level[t->prio], &t->qnode);
    k_rq_mark(rq, t->prio);
}

static inline void k_rq_add_head(struct k_readyq *rq, rt_thread_t *t)
{
    rt_list_prepend(&rq->level[t->prio], &t->qnode);
    k_rq_mark(rq, t->prio);
}

static inline void k_rq_remove(struct k_readyq *rq, rt_thread_t *t)
{
    unsigned prio = t->prio;
    rt_list_remove(&t->qnode);
    if (rt_list_empty(&rq->level[prio])) {
        rq->bits[prio / 64] &= ~(1ull << (prio % 64));
        if (rq->bits[prio / 64] == 0) {
            rq->summary &= ~(1ull << (prio / 64));
        }
    }
    K_ASSERT(k_rq_consistent(rq, prio));
}

static inline rt_thread_t *k_rq_best(const struct k_readyq *rq)
{
    if (rq->summary == 0) {
        return NULL;
    }
    unsigned w = 63u - (unsigned)__builtin_clzll(rq->summary);
    unsigned prio = w * 64u + 63u - (unsigned)__builtin_clzll(rq->bits[w]);
    K_ASSERT(k_rq_consistent(rq, prio) && !rt_list_empty(&rq->level[prio]));
    return RT_CONTAINER_OF(rq->level[prio].next, rt_thread_t, qnode);
}

/* ---------------- wait queues (waitq.c, pure) ---------------- */
void k_waitq_init(struct k_waitq *wq);
/* Highest priority first; behind every waiter of the same priority (FIFO). */
void k_waitq_insert(struct k_waitq *wq, rt_thread_t *t);

static inline void k_waitq_remove(rt_thread_t *t)
{
    rt_list_remove(&t->qnode);
    t->waitq = NULL;
}

static inline rt_thread_t *k_waitq_first(const struct k_waitq *wq)
{
    if (rt_list_empty(&wq->waiters)) {
        return NULL;
    }
    return RT_CONTAINER_OF(wq->waiters.next, rt_thread_t, qnode);
}

/* ---------------- timer queue (timeq.c, pure) ----------------
 * Sorted by deadline, FIFO among equal deadlines. Insertion is O(n) in the number of armed timeouts
 * (one per blocked thread at most); expiry and the earliest deadline are O(1).
 */
struct k_timerq {
    rt_list_t list;
};

void k_tq_init(struct k_timerq *tq);
bool k_tq_insert(struct k_timerq *tq, struct k_timeout *to, uint64_t deadline); /* true: new earliest */

/* Inline: the timer interrupt's path. */
static inline void k_tq_remove(struct k_timeout *to)
{
    rt_list_remove(&to->node);
}

static inline struct k_timeout *k_tq_first(const struct k_timerq *tq)
{
    if (rt_list_empty(&tq->list)) {
        return NULL;
    }
    return RT_CONTAINER_OF(tq->list.next, struct k_timeout, node);
}

static inline struct k_timeout *k_tq_pop_expired(struct k_timerq *tq, uint64_t now)
{
    struct k_timeout *to = k_tq_first(tq);
    if (to == NULL || to->deadline > now) {
        return NULL;
    }
    rt_list_remove(&to->node);
    return to;
}

/* ---------------- time conversions (timeconv.c, pure) ----------------
 * Exact, O(1) at any frequency, saturating at UINT64_MAX (= K_TICKS_NEVER): a timeout too long for the
 * counter is one that never expires. freq: 1..K_FREQ_MAX Hz (k_time_init refuses others).
 */
#define K_FREQ_MAX 4000000000ull
/* The fewest ticks covering ns (rounded up: a deadline is never early). */
uint64_t k_ns_to_ticks(uint64_t ns, uint64_t freq);
/* The ns that ticks span (rounded down), so k_ticks_to_ns(k_ns_to_ticks(ns)) >= ns. */
uint64_t k_ticks_to_ns(uint64_t ticks, uint64_t freq);
/* now + ticks, or K_TICKS_NEVER where that would reach or pass it. */
uint64_t k_ticks_after(uint64_t now, uint64_t ticks);

/* ---------------- priority inheritance (pi.c, pure) ---------------- */
/* Moves t to effective priority prio wherever it is queued (ready queue or wait queue). */
void k_thread_reprio(struct k_readyq *rq, rt_thread_t *t, uint8_t prio);
/* Recomputes t's effective priority from its base and the waiters of the mutexes it holds, then
 * follows the chain t -> mutex t waits on -> its owner -> ... while priorities change. */
void k_pi_update(struct k_readyq *rq, rt_thread_t *t);
/* True if t owns m or owns a mutex somewhere along m's chain of blocked owners (lock cycle). */
bool k_pi_would_deadlock(const rt_mutex_t *m, const rt_thread_t *t);

/* ---------------- message ring (ring.c, pure) ---------------- */
void k_ring_init(struct k_ring *r, void *buf, size_t msg_size, size_t capacity);
bool k_ring_put(struct k_ring *r, const void *msg); /* false when full */
bool k_ring_get(struct k_ring *r, void *msg);       /* false when empty */
void k_memcpy(void *dst, const void *src, size_t n);

/* ---------------- CPU state and the kernel lock (state.c) ---------------- */
struct k_cpu {
    struct k_readyq rq;
    struct k_timerq tq;
    uint32_t irq_nest; /* interrupt nesting levels in progress: > 0 inside a handler */
    bool need_resched; /* set in an interrupt handler; acted on at its exit */
    bool started;      /* first thread switched in */
    bool in_fault;
    uint64_t irq_count;
    struct k_timeout slice_to;
    uint64_t freq; /* counter frequency, Hz: 1..K_FREQ_MAX */
    /* Counter value at the last switch: the running thread has run since then, on top of its
     * cpu_ticks (so its CPU time is cpu_ticks + now - switch_stamp). */
    uint64_t switch_stamp;
    rt_thread_t *idle; /* the idle thread (boot.c), for rt_cpu_idle_time and the FP/SIMD switch */
    /* The thread whose FP/SIMD state is in the registers (NULL: none's), and whether they are enabled:
     * only while fp_holder runs (sched.c, fp_take). */
    rt_thread_t *fp_holder;
    bool fp_on;
    /* The scheduler trace (trace.h): the ring's events while it records, else NULL; the next event's
     * index (modulo the ring's size). Here, beside what the recording places use anyway. */
    struct k_trace_ev *trace_ev;
    uint32_t trace_pos;
};

extern struct k_cpu k_cpu;

/* Inline: every kernel call takes the lock, twice on a switch's path (with the queue operations made
 * inline too, ctxsw went from 451 to 396 ns, icount). */
static inline uint64_t k_lock(void)
{
    uint64_t flags;
    __asm__ volatile("mrs %0, daif\n\tmsr daifset, #2" : "=r"(flags) : : "memory");
    return flags;
}

static inline void k_unlock(uint64_t flags)
{
    __asm__ volatile("msr daif, %0" : : "r"(flags) : "memory");
}

static inline rt_thread_t *k_current(void)
{
    return k_cpu.rq.current;
}

/* ---------------- scheduler (sched.c) ---------------- */
void k_make_ready(rt_thread_t *t);
/* Switches to the most urgent ready thread if it is not the current one (deferred in interrupts). */
void k_reschedule(void);
/* Blocks the current thread on wq (may be NULL) until woken or until the absolute deadline (ticks,
 * K_TICKS_NEVER for none). Returns the wake-up result. Lock held. */
int k_block(struct k_waitq *wq, uint64_t deadline);
/* Makes a blocked thread ready with the given result. Lock held. */
void k_wake(rt_thread_t *t, int result);
/* Removes a thread from every queue and marks it dead; wakes its joiners. Lock held. */
void k_thread_kill(rt_thread_t *t);
/* An event-flags waiter's wait.ev[]: the bits it wants, its options, the flags that released it. */
#define K_EV_WANT 0
#define K_EV_OPTS 1
#define K_EV_SEEN 2

static inline bool k_event_satisfied(uint32_t flags, uint32_t want, unsigned opts)
{
    return (opts & RT_EVENT_ALL) ? (flags & want) == want : (flags & want) != 0;
}

/* rt_event_set's work, with the kernel lock held; the caller reschedules. In sched.c: a thread's end
 * posts its rt_thread_on_exit notice there too. */
void k_event_post(rt_event_t *e, uint32_t bits);
static inline bool k_can_block(rt_time_t timeout)
{
    return timeout == RT_NO_WAIT || (k_cpu.irq_nest == 0 && k_cpu.started);
}
void k_timer_arm(struct k_timeout *to, uint64_t deadline);
void k_timer_isr(unsigned intid, void *arg);
void k_sched_start(void) __attribute__((noreturn));
void k_slice_init(void);
/* Stack guard: pattern filled into the lowest RT_STACK_GUARD bytes of every stack (thread.c). */
#define K_STACK_PATTERN 0x4b43415453415254ull /* "TRASTACK" */
/* Checks t's guard words and its stack pointer sp (taken while t runs: at each switch away from it and
 * when it ends); reports an overflow through k_stack_overflow. Lock held. */
bool k_check_stack(rt_thread_t *t, uint64_t sp); /* true: an overflow, whose fault hook killed t */
void k_check_own_stack(rt_thread_t *t);
/* Reports an overwritten guard or an SP below it; returns only if the fault hook killed t. Lock held. */
void k_stack_overflow(rt_thread_t *t, uint64_t sp);
/* Calls the application's fault hook for f's thread; true if the thread was killed and the system
 * goes on. */
bool k_thread_fault(struct rt_fault *f);

/* ---------------- time (time.c) ---------------- */
/* The kernel's timer: the EL1 virtual timer (bare metal, or a CPU of the rtos's own), or with phys the
 * EL1 physical one (boot argument timer=phys: a CPU the rtos shares with Linux, whose timer the virtual
 * one is there; rtmux adds the argument for such a partition). */
void k_time_init(bool phys, unsigned irq_prio); /* irq_prio: the timer interrupt's (rtos/irq.h) */
/* Timeout in ns to an absolute deadline in ticks. */
uint64_t k_deadline(rt_time_t timeout);

/* ---------------- threads (thread.c) ---------------- */
/* First C code of every thread (arch_thread_start calls it): runs entry(arg), then exits. */
void k_thread_main(void (*entry)(void *), void *arg) __attribute__((noreturn));

/* The live threads, for the statistics (rt_thread_stats_get): a thread takes the first free entry at its
 * creation and leaves it when it ends (state.c). */
struct k_thread_table {
    rt_thread_t *slot[RT_THREADS_MAX];
    unsigned unlisted; /* live threads created while it was full */
};
extern struct k_thread_table k_threads;
/* rt_thread_t.slot of a live thread the full table could not list, and of a thread taken out of it. */
#define K_SLOT_FULL UINT32_MAX
#define K_SLOT_NONE (UINT32_MAX - 1u)
/* Enters a new thread, and takes a dead one out (k_thread_kill). Lock held. */
void k_thread_list(rt_thread_t *t);
void k_thread_unlist(rt_thread_t *t);

static inline const char *k_thread_name(const rt_thread_t *t)
{
    return t != NULL && t->name != NULL ? t->name : "?";
}

/* ---------------- the fatal path (panic.c): no lock, no scheduler ---------------- */
/* Console output straight to the UART (LF becomes CR LF), or into the console ring once
 * k_console_use_ring was called: early boot, handlers, fault reports. Never waits for a lock. */
void k_console_write(const char *s, size_t n);
/* From now on the console is the shared-memory ring at `base` (lib/conring.h), `size` data bytes. */
void k_console_use_ring(uintptr_t base, uint32_t size);
void k_console_puts(const char *s);
/* One formatted line (at most 256 bytes) through k_console_write. */
void k_fatal_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints that the system halted and reports the fatal error to the firmware or hypervisor (arch_system_fatal
 * with `syndrome`: the exception syndrome when an exception caused it, else 0), which powers the system
 * (or the partition) off or applies its fault policy; waits with interrupts masked if that returns. */
void k_halt(uint64_t syndrome) __attribute__((noreturn));

/* Interrupt controller glue (irq.c over drivers/intc.h) */
void k_irq_init(void);
/* rt_irq_attach for a handler of the kernel's (built without FP/SIMD, argument NULL): a level that runs
 * only such handlers skips the FP/SIMD trap set-up. */
int k_irq_attach_kernel(unsigned intid, unsigned prio, unsigned trigger, rt_irq_handler_t handler);

/* V-Bus channels (chan.c): found in the DTB's /rtmux-vbus (none without it), the region initialised and
 * the doorbell attached; before the first thread runs. */
void k_chan_init(const void *dtb, unsigned irq_prio); /* irq_prio: the doorbell's (rtos/irq.h) */

/* Boot arguments (boot.c) */
void k_bootargs_init(const void *dtb);
/* The interrupt priority boot argument `key` (RT_IRQ_PRIO_MIN..255), or dflt, reported, if it is not one. */
unsigned k_bootarg_irq_prio(const char *key, unsigned dflt);
/* FDT (lib/fdt.c): /chosen/bootargs, or NULL. */
const char *k_fdt_bootargs(const void *dtb);
/* FDT: the value of property `name` of /chosen and its length, or NULL. */
const void *k_fdt_chosen(const void *dtb, const char *name, uint32_t *len);
/* FDT: the value of property `name` of the node at `path` ("/a/b@1": full node names from the root) and
 * its length, or NULL (no such node or property, or a malformed blob). */
const void *k_fdt_prop(const void *dtb, const char *path, const char *name, uint32_t *len);

/* Interrupt entry (irq.c) and fault reporting (fault.c), called from vectors.S; boot (boot.c). One
 * nesting level's handlers, on the interrupt stack; then, for the outermost, its exit on the thread's
 * stack, which may switch threads. */
void k_irq_handle(void);
void k_irq_exit(void);
/* A thread's first FP/SIMD instruction (vectors.S): it uses FP/SIMD from now on, and gets the registers. */
void k_fp_first_use(void);
void k_sync_exception(struct arch_frame *frame) __attribute__((noreturn));
void k_bad_exception(struct arch_frame *frame, uint64_t kind) __attribute__((noreturn));
void k_boot(const void *dtb, uint64_t entry_el) __attribute__((noreturn));

#endif /* RTOS_KERNEL_H */
