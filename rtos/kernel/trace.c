/*
 * The scheduler trace (rtos/trace.h): the ring, its thread names, and turning it on and off. The
 * recording itself is k_trace (trace.h), inline at each place that records.
 */
#include "trace.h"

#include "kernel.h"

/* In .bss: zero until the first event (the tools take ts 0 for "never written"). */
struct k_trace_buf k_trace_ring;

void k_trace_name(const rt_thread_t *t)
{
    struct k_trace_name *n = &k_trace_ring.names[t->id % RT_THREADS_MAX];
    n->id = t->id;
    n->prio = t->base_prio;
    const char *s = k_thread_name(t);
    unsigned i = 0;
    for (; i < K_TRACE_NAME - 1u && s[i] != '\0'; i++) {
        n->name[i] = s[i];
    }
    for (; i < K_TRACE_NAME; i++) {
        n->name[i] = '\0';
    }
}

void k_trace_init(bool on)
{
    k_trace_ring.magic = K_TRACE_MAGIC;
    k_trace_ring.version = K_TRACE_VERSION;
    k_trace_ring.nevents = RT_TRACE_EVENTS;
    k_trace_ring.freq = k_cpu.freq;
    k_trace_ring.nnames = RT_THREADS_MAX;
    if (on) {
        rt_trace_start();
    }
}

void rt_trace_start(void)
{
    uint64_t f = k_lock();
    k_cpu.trace_ev = k_trace_ring.ev;
    k_trace_ring.on = 1;
    k_unlock(f);
}

void rt_trace_stop(void)
{
    uint64_t f = k_lock();
    k_cpu.trace_ev = NULL;
    k_trace_ring.on = 0;
    k_unlock(f);
}

bool rt_trace_on(void)
{
    return k_cpu.trace_ev != NULL;
}

void rt_trace_mark(uint16_t id, uint32_t value)
{
    uint64_t f = k_lock();
    k_trace(K_TR_MARK, 0, id, value);
    k_unlock(f);
}
