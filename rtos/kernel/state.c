/*
 * The kernel's CPU state and its lock: the bottom of the kernel, used by every other kernel file and
 * depending on none.
 */
#include "arch/cpu.h"
#include "kernel.h"
#include "rtos/thread.h"

struct k_cpu k_cpu;
struct k_thread_table k_threads;

void k_thread_list(rt_thread_t *t)
{
    t->slot = K_SLOT_FULL;
    for (uint32_t i = 0; i < RT_THREADS_MAX; i++) {
        if (k_threads.slot[i] == NULL) {
            k_threads.slot[i] = t;
            t->slot = i;
            return;
        }
    }
    k_threads.unlisted++;
}

void k_thread_unlist(rt_thread_t *t)
{
    if (t->slot < RT_THREADS_MAX && k_threads.slot[t->slot] == t) {
        k_threads.slot[t->slot] = NULL;
    } else if (t->slot == K_SLOT_FULL && k_threads.unlisted > 0) {
        k_threads.unlisted--;
    }
    t->slot = K_SLOT_NONE; /* a second call changes nothing */
}

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
