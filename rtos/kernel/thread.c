/*
 * Thread life cycle and scheduling parameters.
 */
#include "rtos/thread.h"
#include "arch/cpu.h"
#include "kernel.h"
#include "rtos/time.h"
#include "trace.h"

static uint32_t last_id;

static bool thread_ok(const rt_thread_t *t)
{
    return t != NULL && t->magic == K_MAGIC_THREAD;
}

int rt_thread_create(rt_thread_t *t, const char *name, rt_entry_t entry, void *arg, void *stack,
                     size_t stack_size, unsigned prio)
{
    if (t == NULL || entry == NULL || stack == NULL || stack_size < RT_STACK_MIN + arch_tls_reserve() ||
        prio < RT_PRIO_MIN || prio > RT_PRIO_MAX || ((uintptr_t)stack & 15u) != 0) {
        return RT_EINVAL;
    }
    if (rt_in_irq()) {
        return RT_EPERM;
    }
    if (t->magic == K_MAGIC_THREAD && t->state != K_THREAD_DEAD) {
        return RT_EBUSY; /* before the stack is painted: it may be this live thread's */
    }
    /* The whole stack holds the pattern: its lowest RT_STACK_GUARD bytes are the guard, and how far the
     * rest stays untouched gives the high-water mark (rt_thread_stats_get). Painted before the lock, so
     * that creating a thread with a large stack delays no interrupt. */
    uint8_t *base = stack;
    uint64_t *words = (uint64_t *)(void *)base;
    for (size_t i = 0; i < stack_size / 8u; i++) {
        words[i] = K_STACK_PATTERN;
    }
    uint64_t f = k_lock();
    if (t->magic == K_MAGIC_THREAD && t->state != K_THREAD_DEAD) {
        k_unlock(f); /* created meanwhile by a more urgent thread */
        return RT_EBUSY;
    }
    t->magic = K_MAGIC_THREAD;
    t->name = name != NULL ? name : "?";
    t->base_prio = (uint8_t)prio;
    t->prio = (uint8_t)prio;
    rt_list_init(&t->qnode);
    t->waitq = NULL;
    t->wait_mutex = NULL;
    rt_list_init(&t->owned_mutexes);
    rt_list_init(&t->timeout.node);
    t->wait_result = RT_OK;
    t->stack_base = base;
    t->stack_size = stack_size;
    t->entry = entry;
    t->arg = arg;
    t->period = 0;
    t->release = 0;
    t->slice = 0;
    t->slice_left = 0;
    k_waitq_init(&t->joiners);
    t->exit_event = NULL;
    t->exit_bits = 0;
    t->switches_in = 0;
    t->cpu_ticks = 0;
    t->id = ++last_id;
    t->wakeups = 0;
    t->wake_stamp = 0;
    t->worst_wake = 0;
    k_thread_list(t);
    k_trace_name(t);
    k_trace(K_TR_WAKE, t->prio, K_TR_BY_CREATE, t->id);
    arch_context_init(&t->ctx, (uintptr_t)(base + stack_size), k_thread_main, entry, arg);
    k_make_ready(t);
    if (k_cpu.started) {
        k_reschedule();
    }
    k_unlock(f);
    return RT_OK;
}

/* First C code of every thread (from arch_thread_start), entered with IRQs masked by the switch. */
void k_thread_main(void (*entry)(void *), void *arg)
{
    arch_irq_enable();
    entry(arg);
    rt_thread_exit();
}

void rt_thread_exit(void)
{
    (void)k_lock();
    if (k_cpu.irq_nest > 0) {
        /* A handler returns through the interrupted thread's exception frame, on its stack: ending
         * that thread from here cannot be done. It is an application error, stopped as one. */
        rt_panic("rt_thread_exit called from an interrupt handler");
    }
    rt_thread_t *cur = k_current();
    k_check_own_stack(cur); /* its last chance: an overflow is reported, not lost with the thread */
    if (cur->state != K_THREAD_DEAD) {
        k_thread_kill(cur); /* (the fault hook may have killed it for an overflow already) */
    }
    k_reschedule();
    k_halt(0); /* unreachable: a dead thread is never switched back in */
}

rt_thread_t *rt_thread_self(void)
{
    return k_current();
}

const char *rt_thread_name(const rt_thread_t *t)
{
    return k_thread_name(t);
}

int rt_thread_set_priority(rt_thread_t *t, unsigned prio)
{
    if (!thread_ok(t) || prio < RT_PRIO_MIN || prio > RT_PRIO_MAX) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    if (t->state == K_THREAD_DEAD) {
        k_unlock(f);
        return RT_EINVAL;
    }
    t->base_prio = (uint8_t)prio;
    /* The effective priority never drops below what waiters on t's mutexes lend it; a change
     * travels on to the owner of the mutex t waits for. */
    k_pi_update(&k_cpu.rq, t);
    k_reschedule();
    k_unlock(f);
    return RT_OK;
}

int rt_thread_get_priority(const rt_thread_t *t, unsigned *base, unsigned *effective)
{
    if (!thread_ok(t)) {
        return RT_EINVAL;
    }
    if (base != NULL) {
        *base = t->base_prio;
    }
    if (effective != NULL) {
        *effective = t->prio;
    }
    return RT_OK;
}

int rt_thread_set_timeslice(rt_thread_t *t, rt_time_t slice)
{
    if (!thread_ok(t)) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    /* A slice too long for the counter (it saturates) is one that never ends: none. */
    uint64_t ticks = rt_ns_to_ticks(slice);
    t->slice = ticks == K_TICKS_NEVER ? 0 : ticks;
    t->slice_left = t->slice;
    if (t == k_current()) {
        k_tq_remove(&k_cpu.slice_to);
        if (t->slice != 0) {
            k_timer_arm(&k_cpu.slice_to, k_ticks_after(arch_counter(), t->slice));
        }
    }
    k_unlock(f);
    return RT_OK;
}

void rt_thread_yield(void)
{
    if (rt_in_irq()) {
        return;
    }
    uint64_t f = k_lock();
    rt_thread_t *cur = k_current();
    k_rq_remove(&k_cpu.rq, cur);
    k_rq_add_tail(&k_cpu.rq, cur);
    if (cur->slice != 0 && k_rq_best(&k_cpu.rq) != cur) {
        /* It gave its turn away: with no slice armed, the switch gives it a whole one for the next. */
        k_tq_remove(&k_cpu.slice_to);
    }
    k_reschedule();
    k_unlock(f);
}

int rt_thread_join(rt_thread_t *t, rt_time_t timeout)
{
    if (t == NULL || t == k_current()) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    int ret = RT_OK;
    if (t->state == K_THREAD_DEAD || t->state == K_THREAD_UNUSED) {
        ret = RT_OK;
    } else if (t->magic != K_MAGIC_THREAD) {
        ret = RT_EINVAL;
    } else if (timeout == RT_NO_WAIT) {
        ret = RT_EWOULDBLOCK;
    } else if (!k_can_block(timeout)) {
        ret = RT_EPERM;
    } else {
        ret = k_block(&t->joiners, k_deadline(timeout));
    }
    k_unlock(f);
    return ret;
}

int rt_thread_on_exit(rt_thread_t *t, rt_event_t *e, uint32_t bits)
{
    if (t == NULL || (e != NULL && (e->magic != K_MAGIC_EVENT || bits == 0))) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    if (t->magic != K_MAGIC_THREAD || t->state == K_THREAD_DEAD || t->state == K_THREAD_UNUSED) {
        /* Already over: told at once, as if it had ended now. */
        if (e != NULL) {
            k_event_post(e, bits);
            k_reschedule();
        }
    } else {
        t->exit_event = e;
        t->exit_bits = e != NULL ? bits : 0;
    }
    k_unlock(f);
    return RT_OK;
}

int rt_thread_is_dead(const rt_thread_t *t)
{
    return t == NULL || t->magic != K_MAGIC_THREAD || t->state == K_THREAD_DEAD ||
           t->state == K_THREAD_UNUSED;
}

uint64_t rt_thread_switch_count(const rt_thread_t *t)
{
    return t != NULL ? t->switches_in : 0;
}

/* t's CPU time in counter ticks: up to its last switch away, plus its current turn if it runs. Lock held. */
static uint64_t cpu_ticks(const rt_thread_t *t)
{
    uint64_t ticks = t->cpu_ticks;
    if (t == k_cpu.rq.current && k_cpu.started) {
        ticks += arch_counter() - k_cpu.switch_stamp; /* its current turn, still running */
    }
    return ticks;
}

rt_time_t rt_thread_cpu_time(const rt_thread_t *t)
{
    uint64_t f = k_lock();
    if (t == NULL) {
        t = k_cpu.rq.current;
    }
    uint64_t ticks = t != NULL ? cpu_ticks(t) : 0;
    k_unlock(f);
    return rt_ticks_to_ns(ticks);
}

rt_time_t rt_cpu_idle_time(void)
{
    return k_cpu.idle != NULL ? rt_thread_cpu_time(k_cpu.idle) : 0;
}

/* Bytes of the stack ever written, from its top: the pattern rt_thread_create painted ends there. */
static uint64_t stack_used(const uint8_t *base, uint64_t size)
{
    const uint64_t *w = (const uint64_t *)(const void *)base;
    uint64_t i = 0;
    while (i < size / 8u && w[i] == K_STACK_PATTERN) {
        i++;
    }
    return size - i * 8u;
}

int rt_thread_stats_get(unsigned slot, struct rt_thread_stats *out)
{
    if (slot >= RT_THREADS_MAX || out == NULL) {
        return RT_EINVAL;
    }
    uint64_t f = k_lock();
    const rt_thread_t *t = k_threads.slot[slot];
    if (t == NULL) {
        k_unlock(f);
        return RT_ENOENT;
    }
    uint64_t ticks = cpu_ticks(t);
    if (t == k_cpu.rq.current) {
        out->state = RT_THREAD_RUNNING;
    } else {
        out->state = t->state == K_THREAD_READY ? RT_THREAD_READY : RT_THREAD_BLOCKED;
    }
    out->id = t->id;
    out->name = k_thread_name(t);
    out->base_prio = t->base_prio;
    out->prio = t->prio;
    out->switches = t->switches_in;
    out->wakeups = t->wakeups;
    uint64_t worst = t->worst_wake;
    const uint8_t *base = t->stack_base;
    out->stack_size = t->stack_size;
    k_unlock(f);
    out->cpu_ns = rt_ticks_to_ns(ticks);
    out->worst_wake_ns = rt_ticks_to_ns(worst);
    /* Without the lock: a stack only grows its written part, and reading it disturbs nobody. */
    out->stack_used = stack_used(base, out->stack_size);
    return RT_OK;
}

unsigned rt_thread_stats_unlisted(void)
{
    return k_threads.unlisted;
}
