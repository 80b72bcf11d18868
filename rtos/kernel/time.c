/*
 * Time base, sleeps and periodic threads. Internally all deadlines are absolute counter ticks.
 */
#include "rtos/time.h"
#include "arch/cpu.h"
#include "board.h"
#include "kernel.h"
#include "rtos/irq.h"
#include "rtos/system.h"

void k_time_init(bool phys)
{
    uint64_t freq = arch_counter_freq();
    if (freq == 0 || freq > 4000000000ull) {
        rt_panic("CNTFRQ_EL0 is 0 or above 4 GHz: the boot firmware did not set the counter frequency");
    }
    k_cpu.freq = freq;
    /* Both fit 64 bits for 1 Hz..4 GHz: 1e9 << 32 < 2^62 and freq << 32 < 2^64. */
    k_cpu.ns_mult = (1000000000ull << 32) / freq;
    k_cpu.tick_mult = (freq << 32) / 1000000000ull;
    k_tq_init(&k_cpu.tq);
    arch_timer_phys = phys;
    unsigned intid = phys ? BOARD_INTID_PHYS_TIMER : BOARD_INTID_VIRT_TIMER;
    arch_timer_disarm();
    if (rt_irq_attach(intid, 255, RT_IRQ_LEVEL, k_timer_isr, NULL) != RT_OK ||
        rt_irq_enable(intid) != RT_OK) {
        rt_panic("cannot attach the kernel timer interrupt");
    }
}

rt_time_t rt_ticks_to_ns(uint64_t ticks)
{
    return (rt_time_t)(((unsigned __int128)ticks * k_cpu.ns_mult) >> 32);
}

uint64_t rt_ns_to_ticks(rt_time_t ns)
{
    unsigned __int128 prod = (unsigned __int128)ns * k_cpu.tick_mult;
    uint64_t ticks = (uint64_t)(prod >> 32);
    /* Round up so a deadline is never programmed before the requested time; tick_mult itself is
     * rounded down, so check the round trip. */
    while (rt_ticks_to_ns(ticks) < ns) {
        ticks++;
    }
    return ticks;
}

uint64_t k_deadline(rt_time_t timeout)
{
    if (timeout == RT_FOREVER) {
        return K_TICKS_NEVER;
    }
    return arch_counter() + rt_ns_to_ticks(timeout);
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
        ret = k_block(NULL, deadline);
        if (ret == RT_ETIMEDOUT) {
            ret = RT_OK; /* for a sleep, the deadline passing is success */
        }
    }
    k_unlock(f);
    return ret;
}

int rt_sleep(rt_time_t duration)
{
    if (duration == RT_FOREVER) {
        return RT_EINVAL;
    }
    return sleep_ticks(arch_counter() + rt_ns_to_ticks(duration));
}

int rt_sleep_until(rt_time_t deadline)
{
    return sleep_ticks(rt_ns_to_ticks(deadline));
}

int rt_periodic_start(rt_time_t start, rt_time_t period)
{
    if (period == 0 || rt_in_irq()) {
        return RT_EINVAL;
    }
    rt_thread_t *t = k_current();
    uint64_t p = rt_ns_to_ticks(period);
    uint64_t first = start == 0 ? arch_counter() + p : rt_ns_to_ticks(start);
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
    if (t->release <= now) {
        /* Points release..now have passed: serve the latest at once and report how many passed. */
        missed = (now - t->release) / t->period + 1;
        t->release += (missed - 1) * t->period;
        ret = RT_EOVERRUN;
    } else {
        uint64_t f = k_lock();
        (void)k_block(NULL, t->release);
        k_unlock(f);
    }
    if (overruns != NULL) {
        *overruns = missed;
    }
    if (release != NULL) {
        *release = rt_ticks_to_ns(t->release);
    }
    return ret;
}
