/*
 * Spinlock for the few structures CPUs share (console, distributor, partition states). Waiters sleep
 * in WFE; the release (a store to the lock word) wakes them through the exclusive monitor. On hardware
 * the first `sevl; wfe` costs nothing. QEMU's TCG turns every WFE into a yield to the next vCPU of its
 * round-robin, which shapes the icount figures of -smp 2 either way: without it (a free lock taken
 * before any WFE) the rtos beside V-Bus traffic got a 3.9 ms worst case and the V-Bus round trip went
 * from 19 to 29 us, with it a CPU shared with the rtos counts the other vCPU's slices in its world
 * switches (BENCHMARKS.md, shared-core mode). Kept as the bench's figures were measured.
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
    __asm__ volatile("sevl\n"
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
