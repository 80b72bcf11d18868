/*
 * Host stand-in for hyp/arch/arm64/include/arch/cpu.h: the hypervisor's pure modules built natively for
 * unit tests. Barriers and hints do nothing on one host thread; the counter is a test-settable value.
 */
#ifndef HYP_ARCH_CPU_H
#define HYP_ARCH_CPU_H

#include <stdint.h>

#include "arm64/sysreg.h"

extern uint64_t host_counter;

static inline void arch_isb(void) {}
static inline void arch_dsb_ishst(void) {}
static inline void arch_sync_icache(void) {}
static inline void arch_yield(void) {}
static inline void arch_wfi(void) {}
static inline void arch_irq_enable(void) {}
static inline void arch_irq_disable(void) {}
static inline uint64_t arch_counter(void)
{
    return host_counter;
}
static inline uint64_t arch_counter_hz(void)
{
    return 62500000u; /* QEMU virt's */
}
static inline uint64_t arch_mpidr_affinity(void)
{
    return 0;
}

#endif /* HYP_ARCH_CPU_H */
