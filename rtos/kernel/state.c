/*
 * The kernel's CPU state and its lock: the bottom of the kernel, used by every other kernel file and
 * depending on none.
 */
#include "arch/cpu.h"
#include "kernel.h"

struct k_cpu k_cpu;

bool rt_in_irq(void)
{
    return k_cpu.irq_nest > 0;
}

uint64_t rt_irq_count(void)
{
    return k_cpu.irq_count;
}

uint64_t rt_irq_lock(void)
{
    return arch_irq_lock();
}

void rt_irq_unlock(uint64_t key)
{
    arch_irq_unlock(key);
}
