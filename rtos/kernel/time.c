/*
 * Time base, sleeps and periodic threads. Internally all deadlines are absolute counter ticks.
 */
#include "rtos/time.h"
#include "arch/cpu.h"
#include "board.h"
#include "kernel.h"
#include "rtos/irq.h"
#include "rtos/system.h"

void k_time_init(bool phys, unsigned irq_prio)
{
    uint64_t freq = arch_counter_freq();
    if (freq == 0 || freq > K_FREQ_MAX) {
        rt_panic("CNTFRQ_EL0 is 0 or above 4 GHz: the boot firmware did not set the counter frequency");
    }
    k_cpu.freq = freq;
    k_tq_init(&k_cpu.tq);
    arch_timer_phys = phys;
    unsigned intid = phys ? BOARD_INTID_PHYS_TIMER : BOARD_INTID_VIRT_TIMER;
    arch_timer_disarm();
    if (k_irq_attach_kernel(intid, irq_prio, RT_IRQ_LEVEL, k_timer_isr) != RT_OK ||
        rt_irq_enable(intid) != RT_OK) {
        rt_panic("cannot attach the kernel timer interrupt");
    }
}

rt_time_t rt_ticks_to_ns(uint64_t ticks)
{
    return k_ticks_to_ns(ticks, k_cpu.freq);
}

uint64_t rt_ns_to_ticks(rt_time_t ns)
{
    return k_ns_to_ticks(ns, k_cpu.freq);
}

uint64_t k_deadline(rt_time_t timeout)
{
    if (timeout == RT_FOREVER) {
        return K_TICKS_NEVER; /* below 1 GHz it fits the counter (584 years), but means never */
    }
    return k_ticks_after(arch_counter(), rt_ns_to_ticks(timeout));
}

rt_time_t rt_time_now(void)
{
    return rt_ticks_to_ns(arch_counter());
}

rt_time_t rt_time_resolution(void)
{
    rt_time_t r = rt_ticks_to_ns(1);
    return r == 0 ? 1 : r;
}

static int sleep_ticks(uint64_t deadline)
{
    if (!k_can_block(RT_FOREVER)) {
        return RT_EPERM;
    }
    uint64_t f = k_lock();
    int ret = RT_OK;
    if (deadline > arch_counter()) {
        ret = k_block(NULL, deadline); /* K_TICKS_NEVER: no timer, blocked for good */
        if (ret == RT_ETIMEDOUT) {
            ret = RT_OK; /* for a sleep, the deadline passing is success */
        }
    }
    k_unlock(f);
    return ret;
}

int rt_sleep(rt_time_t duration)
{
    return sleep_ticks(k_deadline(duration));
}

int rt_sleep_until(rt_time_t deadline)
{
    return sleep_ticks(deadline == RT_FOREVER ? K_TICKS_NEVER : rt_ns_to_ticks(deadline));
}

int rt_periodic_start(rt_time_t start, rt_time_t period)
{
    if (period == 0 || rt_in_irq()) {
        return RT_EINVAL;
    }
    rt_thread_t *t = k_current();
    uint64_t p = rt_ns_to_ticks(period);
    if (p == K_TICKS_NEVER) {
        return RT_EINVAL; /* a period the counter cannot count: no second release point */
    }
    uint64_t first = start == 0 ? k_ticks_after(arch_counter(), p) : rt_ns_to_ticks(start);
    t->period = p;
    /* rt_periodic_wait advances by one period before sleeping. */
    t->release = first - p;
    return RT_OK;
}

int rt_periodic_wait(uint64_t *overruns, rt_time_t *release)
{
    rt_thread_t *t = k_current();
    if (rt_in_irq() || t == NULL || t->period == 0) {
        return RT_EINVAL;
    }
    uint64_t missed = 0;
    int ret = RT_OK;
    t->release += t->period;
    uint64_t now = arch_counter();
    rt_time_t release_ns;
    if (t->release < now) {
        /* Points from release on lie before now: report how many, serve the latest at or before now
         * at once (late unless it falls on now itself). */
        uint64_t late = now - t->release;
        missed = (late - 1u) / t->period + 1u;
        t->release += late / t->period * t->period;
        release_ns = rt_ticks_to_ns(t->release);
        ret = RT_EOVERRUN;
    } else {
        /* Converted before the wait, so that the woken thread's path to its caller (who typically
         * reads the clock next to measure its latency) holds no conversion. */
        release_ns = rt_ticks_to_ns(t->release);
        if (t->release > now) {
            uint64_t f = k_lock();
            (void)k_block(NULL, t->release);
            k_unlock(f);
        }
        /* release == now: the point is reached this very tick, on time, not missed */
    }
    if (overruns != NULL) {
        *overruns = missed;
    }
    if (release != NULL) {
        *release = release_ns;
    }
    return ret;
}
