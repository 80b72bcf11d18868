/*
 * Scheduler core: blocking, waking, switching, the timer queue's hardware side, and threads that fault
 * (stack overflow, or the application's fault hook killing them).
 */
#include "arch/cpu.h"
#include "kernel.h"
#include "rtos/console.h"
#include "rtos/irq.h"
#include "rtos/thread.h"
#include "rtos/time.h"
#include "trace.h"

/* Where the boot code's registers go when the first thread is switched in; never resumed. */
static struct arch_context boot_ctx;

void k_make_ready(rt_thread_t *t)
{
    t->state = K_THREAD_READY;
    k_rq_add_tail(&k_cpu.rq, t);
}

void k_timer_arm(struct k_timeout *to, uint64_t deadline)
{
    if (k_tq_insert(&k_cpu.tq, to, deadline)) {
        arch_timer_arm(deadline);
    }
}

static void slice_expired(struct k_timeout *to)
{
    (void)to;
    rt_thread_t *cur = k_cpu.rq.current;
    if (cur != NULL && cur->state == K_THREAD_READY && cur->slice != 0) {
        cur->slice_left = cur->slice; /* a whole slice for its next turn */
        k_rq_remove(&k_cpu.rq, cur);
        k_rq_add_tail(&k_cpu.rq, cur);
        if (k_rq_best(&k_cpu.rq) == cur) {
            /* Alone at its level: keep running, next slice. */
            k_timer_arm(&k_cpu.slice_to, k_ticks_after(arch_counter(), cur->slice));
        } else {
            k_cpu.need_resched = true;
        }
    }
}

/* The stack pointer of the code running now (a thread's, or the boot stack before the first switch). */
static inline uint64_t current_sp(void)
{
    uint64_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

bool k_check_stack(rt_thread_t *t, uint64_t sp)
{
    /* Sampled guard words: any stack write of 32 bytes or more into the guard hits one of them. The
     * stack pointer catches a thread below its guard that has not written there (yet): a large frame
     * that jumped over it. */
    const uint64_t *g = (const uint64_t *)(void *)t->stack_base;
    uint64_t bad = 0;
#pragma GCC unroll 8
    for (unsigned i = 0; i < RT_STACK_GUARD / 8u; i += 4u) {
        bad |= g[i] ^ K_STACK_PATTERN;
    }
    bad |= g[RT_STACK_GUARD / 8u - 1u] ^ K_STACK_PATTERN;
    if (bad != 0 || sp < (uint64_t)(uintptr_t)t->stack_base + RT_STACK_GUARD) {
        k_stack_overflow(t, sp);
        return true;
    }
    return false;
}

/* Round-robin: a thread keeps the rest of its slice across a preemption (it also keeps its place at
 * the head of its level), so a higher-priority thread waking often cannot give it a fresh slice each
 * time and starve its peers. A thread that blocks starts its next turn with a whole slice, behind its
 * peers (it is queued at the tail when it wakes). */
static void slice_switch(rt_thread_t *prev, rt_thread_t *next, uint64_t now)
{
    if (prev != NULL && prev->slice != 0) {
        if (prev->state == K_THREAD_READY && !rt_list_empty(&k_cpu.slice_to.node)) {
            uint64_t end = k_cpu.slice_to.deadline;
            prev->slice_left = end > now ? end - now : 0; /* 0: expires as soon as it runs again */
        } else {
            prev->slice_left = prev->slice;
        }
        k_tq_remove(&k_cpu.slice_to);
    }
    if (next->slice != 0) {
        k_timer_arm(&k_cpu.slice_to, k_ticks_after(now, next->slice_left));
    }
}

/*
 * FP/SIMD, lazily (docs/architecture.md "Threads and FP/SIMD"): the registers hold k_cpu.fp_holder's
 * state, and are enabled (k_cpu.fp_on) only while it runs. A thread that has never used them (the idle
 * thread, the kernel's and the measuring threads, which are built without FP/SIMD, and any application
 * thread until its first FP/SIMD instruction) runs with them trapping, so switching to and from it moves
 * nothing; the registers move when a thread that uses them runs and they are another's.
 */
static void fp_take(rt_thread_t *t)
{
    if (k_cpu.fp_holder != t) {
        if (!k_cpu.fp_on) {
            arch_fp_enable(true);
            k_cpu.fp_on = true;
        }
        if (k_cpu.fp_holder != NULL) {
            arch_fp_save(&k_cpu.fp_holder->ctx);
        }
        arch_fp_load(&t->ctx);
        k_cpu.fp_holder = t;
    } else if (!k_cpu.fp_on) {
        arch_fp_enable(true);
        k_cpu.fp_on = true;
    }
}

void k_fp_first_use(void)
{
    rt_thread_t *t = k_cpu.rq.current;
    K_ASSERT(t != NULL && k_cpu.irq_nest == 0 && !k_cpu.fp_on);
    t->uses_fp = 1;
    fp_take(t);
}

/* The trace's records of a switch and a wake-up. Their arguments are computed inside the test, so that
 * they cost nothing while the trace is off. */
static inline void trace_switch(const rt_thread_t *prev, const rt_thread_t *next)
{
    if (k_trace_on()) {
        unsigned left = prev == NULL || prev->state == K_THREAD_READY ? K_TR_LEFT_PREEMPTED
                        : prev->state == K_THREAD_BLOCKED             ? K_TR_LEFT_BLOCKED
                                                                      : K_TR_LEFT_ENDED;
        k_trace(K_TR_SWITCH, next->prio, left, next->id);
    }
}

static inline void trace_wake(const rt_thread_t *t, int result)
{
    if (k_trace_on()) {
        unsigned by = result == RT_ETIMEDOUT ? K_TR_BY_TIMEOUT
                      : k_cpu.irq_nest > 0   ? K_TR_BY_IRQ
                                             : K_TR_BY_THREAD;
        k_trace(K_TR_WAKE, t->prio, by, t->id);
    }
}

static void switch_to(rt_thread_t *next)
{
    rt_thread_t *prev = k_cpu.rq.current;
    k_cpu.rq.current = next;
    next->switches_in++;
    if ((prev != NULL && prev->slice != 0) || next->slice != 0) {
        slice_switch(prev, next, arch_counter());
    }
    /* CPU time: prev ran from the last switch to now (with the interrupts taken meanwhile, which
     * have no thread of their own). One counter read and one add per switch; the boot code before
     * the first switch is nobody's. The read needs no barrier: it may be taken a few instructions
     * early or late, and every thread's turn then ends and the next begins at the same value. */
    uint64_t now = arch_counter_nosync();
    if (next->wake_stamp != 0) {
        /* Its wake-up latency: from its deadline or the call that woke it to now (rtos/thread.h). Signed:
         * two unsynchronised counter reads may come a tick out of order, and a negative one is no worst. */
        int64_t late = (int64_t)(now - next->wake_stamp);
        if (late > (int64_t)next->worst_wake) {
            next->worst_wake = (uint64_t)late;
        }
        next->wake_stamp = 0;
    }
    trace_switch(prev, next);
    if (next->uses_fp) {
        fp_take(next);
    } else if (k_cpu.fp_on) {
        arch_fp_enable(false); /* its first FP/SIMD instruction will trap: k_fp_first_use */
        k_cpu.fp_on = false;
    }
    if (prev == NULL) {
        k_cpu.switch_stamp = now;
        k_cpu.started = true;
        arch_switch(&boot_ctx, &next->ctx);
    } else {
        prev->cpu_ticks += now - k_cpu.switch_stamp;
        k_cpu.switch_stamp = now;
        arch_switch(&prev->ctx, &next->ctx);
        /* Back in prev: some later switch chose it again. Its stack was checked on the way out, with
         * its stack pointer of that moment, by k_reschedule. */
    }
}

void k_reschedule(void)
{
    if (k_cpu.irq_nest > 0) {
        k_cpu.need_resched = true;
        return;
    }
    rt_thread_t *prev = k_cpu.rq.current;
    rt_thread_t *next = k_rq_best(&k_cpu.rq);
    if (next == prev) {
        return;
    }
    /* The idle thread's stack holds its WFI loop and one exception frame (handlers run on the interrupt
     * stack), a fixed depth: its check is left out of the wake-up path. */
    if (prev != NULL && prev != k_cpu.idle && prev->state != K_THREAD_DEAD &&
        k_check_stack(prev, current_sp())) { /* prev is the thread running this code */
        /* An overflow that the fault hook resolved by killing prev changed the ready queue. */
        next = k_rq_best(&k_cpu.rq);
        if (next == prev) {
            return;
        }
    }
    switch_to(next);
}

/* Makes blocked t ready; `stamp`: the counter value its wake-up latency counts from. */
static void wake(rt_thread_t *t, int result, uint64_t stamp)
{
    K_ASSERT(arch_irqs_masked()); /* the kernel lock */
    rt_mutex_t *m = t->wait_mutex;
    if (t->waitq != NULL) {
        k_waitq_remove(t);
    }
    t->wait_mutex = NULL;
    /* Lazy: a timer armed for a cancelled deadline fires, finds nothing due and is reprogrammed. */
    k_tq_remove(&t->timeout);
    t->wait_result = result;
    t->wakeups++;
    t->wake_stamp = stamp;
    k_make_ready(t);
    trace_wake(t, result);
    if (m != NULL && m->owner != NULL) {
        /* t no longer lends its priority to the owner (timeout, or the mutex was handed to t). */
        k_pi_update(&k_cpu.rq, m->owner);
    }
}

static void thread_timeout_expired(struct k_timeout *to)
{
    rt_thread_t *t = RT_CONTAINER_OF(to, rt_thread_t, timeout);
    if (t->state == K_THREAD_BLOCKED) {
        wake(t, RT_ETIMEDOUT, to->deadline); /* late from its deadline, the interrupt's delay included */
    }
}

int k_block(struct k_waitq *wq, uint64_t deadline)
{
    K_ASSERT(arch_irqs_masked()); /* the kernel lock */
    rt_thread_t *cur = k_cpu.rq.current;
    k_rq_remove(&k_cpu.rq, cur);
    cur->state = K_THREAD_BLOCKED;
    cur->wait_result = RT_OK;
    if (wq != NULL) {
        k_waitq_insert(wq, cur);
        if (cur->wait_mutex != NULL) {
            k_pi_update(&k_cpu.rq, cur->wait_mutex->owner);
        }
    }
    if (deadline != K_TICKS_NEVER) {
        cur->timeout.expire = thread_timeout_expired;
        k_timer_arm(&cur->timeout, deadline);
    }
    k_reschedule();
    return cur->wait_result;
}

void k_wake(rt_thread_t *t, int result)
{
    wake(t, result, arch_counter_nosync());
}

void k_event_post(rt_event_t *e, uint32_t bits)
{
    K_ASSERT(arch_irqs_masked()); /* the kernel lock */
    e->flags |= bits;
    /* Every waiter is judged against the flags as set here; bits consumed by RT_EVENT_CLEAR waiters
     * are removed after the scan, so one set can release several waiters. */
    uint32_t consumed = 0;
    rt_list_t *n = e->waitq.waiters.next;
    while (n != &e->waitq.waiters) {
        rt_thread_t *t = RT_CONTAINER_OF(n, rt_thread_t, qnode);
        n = n->next;
        if (k_event_satisfied(e->flags, t->wait.ev[K_EV_WANT], t->wait.ev[K_EV_OPTS])) {
            t->wait.ev[K_EV_SEEN] = e->flags;
            if (t->wait.ev[K_EV_OPTS] & RT_EVENT_CLEAR) {
                consumed |= t->wait.ev[K_EV_WANT];
            }
            k_wake(t, RT_OK);
        }
    }
    e->flags &= ~consumed;
}

void k_thread_kill(rt_thread_t *t)
{
    K_ASSERT(arch_irqs_masked()); /* the kernel lock */
    if (t->state == K_THREAD_READY) {
        k_rq_remove(&k_cpu.rq, t);
    } else if (t->state == K_THREAD_BLOCKED) {
        rt_mutex_t *m = t->wait_mutex;
        if (t->waitq != NULL) {
            k_waitq_remove(t);
        }
        t->wait_mutex = NULL;
        k_tq_remove(&t->timeout);
        if (m != NULL && m->owner != NULL) {
            k_pi_update(&k_cpu.rq, m->owner);
        }
    }
    /* Mutexes a dead thread held go to their first waiter, so nobody waits forever on a corpse. */
    while (!rt_list_empty(&t->owned_mutexes)) {
        rt_mutex_t *m = RT_CONTAINER_OF(t->owned_mutexes.next, rt_mutex_t, owner_node);
        rt_list_remove(&m->owner_node);
        rt_thread_t *w = k_waitq_first(&m->waitq);
        m->owner = w;
        if (w != NULL) {
            rt_list_append(&w->owned_mutexes, &m->owner_node);
            k_wake(w, RT_OK);
        }
    }
    t->state = K_THREAD_DEAD;
    t->magic = 0;
    k_thread_unlist(t);
    if (k_cpu.fp_holder == t) {
        k_cpu.fp_holder = NULL; /* a thread re-created in this object loads its own */
    }
    rt_thread_t *j;
    while ((j = k_waitq_first(&t->joiners)) != NULL) {
        k_wake(j, RT_OK);
    }
    if (t->exit_event != NULL) {
        k_event_post(t->exit_event, t->exit_bits);
        t->exit_event = NULL;
    }
}

void k_timer_isr(unsigned intid, void *arg)
{
    (void)intid;
    (void)arg;
    /* Under the lock: a more urgent handler may nest here and use the kernel (rtos/irq.h). */
    uint64_t f = k_lock();
    struct k_timeout *to;
    uint64_t now = arch_counter();
    while ((to = k_tq_pop_expired(&k_cpu.tq, now)) != NULL) {
        to->expire(to);
    }
    to = k_tq_first(&k_cpu.tq);
    if (to != NULL) {
        arch_timer_arm(to->deadline);
    } else {
        arch_timer_disarm();
    }
    k_unlock(f);
}

void k_sched_start(void)
{
    (void)k_lock();
    k_cpu.fp_on = true; /* as the boot code left CPACR_EL1 (start.S); no thread's state is loaded */
    k_slice_init();
    k_reschedule();
    k_halt(0); /* unreachable: the boot context is never resumed */
}

void k_slice_init(void)
{
    rt_list_init(&k_cpu.slice_to.node);
    k_cpu.slice_to.expire = slice_expired;
}

/* ---- thread faults: the application's hook decides whether a faulting thread dies alone ---- */

static enum rt_fault_action (*fault_hook)(const struct rt_fault *f);

void rt_set_fault_hook(enum rt_fault_action (*hook)(const struct rt_fault *f))
{
    fault_hook = hook;
}

/* Calls the hook for a thread fault; returns true if the thread was killed and the system goes on. */
bool k_thread_fault(struct rt_fault *f)
{
    rt_thread_t *t = f->thread;
    if (t == NULL || fault_hook == NULL || t->base_prio == RT_PRIO_IDLE) {
        return false;
    }
    if (fault_hook(f) != RT_FAULT_KILL_THREAD) {
        return false;
    }
    k_fatal_printf("FATAL: thread %s killed by the fault hook; system continues\n", k_thread_name(t));
    k_cpu.in_fault = false;
    k_thread_kill(t);
    return true;
}

void k_stack_overflow(rt_thread_t *t, uint64_t sp)
{
    k_cpu.in_fault = true;
    k_fatal_printf("FATAL: stack overflow in thread %s (stack 0x%lx..0x%lx, SP 0x%lx)\n", k_thread_name(t),
                   (unsigned long)(uintptr_t)t->stack_base,
                   (unsigned long)((uintptr_t)t->stack_base + t->stack_size), (unsigned long)sp);
    struct rt_fault f = {RT_FAULT_STACK_OVERFLOW, t, 0, 0, 0};
    if (!k_thread_fault(&f)) {
        k_halt(0);
    }
}

/* The stack check of a thread that ends: the thread running this code. */
void k_check_own_stack(rt_thread_t *t)
{
    k_check_stack(t, current_sp());
}
