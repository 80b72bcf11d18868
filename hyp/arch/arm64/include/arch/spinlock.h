/*
 * Spinlock for the few structures CPUs share (console, distributor, partition states). A free lock is
 * taken without a WFE; waiters sleep in WFE, and the release (a store to the lock word) wakes them
 * through the exclusive monitor. (Not `sevl; wfe` first: QEMU's TCG treats every WFE as a yield to the
 * next vCPU in its round-robin, so each uncontended lock gave the other CPU a whole time slice; on a
 * CPU shared with the rtos that made the switch to Linux average 6 us instead of 0.5, -smp 2 icount.)
 * (Host unit tests replace this header.)
 */
#ifndef HYP_ARCH_SPINLOCK_H
#define HYP_ARCH_SPINLOCK_H

#include <stdint.h>

typedef struct {
    volatile uint32_t v; /* 0 free, 1 held */
} spinlock_t;

static inline void spin_lock(spinlock_t *l)
{
    uint32_t tmp, one = 1;
    __asm__ volatile("b 2f\n"
                     "1: wfe\n"
                     "2: ldaxr %w0, [%1]\n"
                     "cbnz %w0, 1b\n"
                     "stxr %w0, %w2, [%1]\n"
                     "cbnz %w0, 2b\n"
                     : "=&r"(tmp)
                     : "r"(&l->v), "r"(one)
                     : "memory");
}

static inline void spin_unlock(spinlock_t *l)
{
    __asm__ volatile("stlr wzr, [%0]" : : "r"(&l->v) : "memory");
}

#endif /* HYP_ARCH_SPINLOCK_H */
