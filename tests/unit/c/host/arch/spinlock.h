/*
 * Host stand-in for hyp/arch/arm64/include/arch/spinlock.h: unit tests run on one thread, so the lock
 * only records that it is balanced.
 */
#ifndef HYP_ARCH_SPINLOCK_H
#define HYP_ARCH_SPINLOCK_H

#include <assert.h>
#include <stdint.h>

typedef struct {
    volatile uint32_t v;
} spinlock_t;

static inline void spin_lock(spinlock_t *l)
{
    assert(l->v == 0); /* never taken twice: would deadlock on hardware */
    l->v = 1;
}

static inline void spin_unlock(spinlock_t *l)
{
    assert(l->v == 1);
    l->v = 0;
}

#endif /* HYP_ARCH_SPINLOCK_H */
