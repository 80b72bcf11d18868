/*
 * Small inline CPU helpers for EL2.
 */
#ifndef HYP_ARCH_CPU_H
#define HYP_ARCH_CPU_H

#include <stdint.h>

#include "arch/sysreg.h"

#define ARCH_READ_SYSREG(reg)                         \
    ({                                                \
        uint64_t v_;                                  \
        __asm__ volatile("mrs %0, " #reg : "=r"(v_)); \
        v_;                                           \
    })
#define ARCH_WRITE_SYSREG(reg, v) __asm__ volatile("msr " #reg ", %0" : : "r"((uint64_t)(v)) : "memory")
#define ARCH_RD(reg)              ARCH_READ_SYSREG(reg)
#define ARCH_WR(reg, v)           ARCH_WRITE_SYSREG(reg, v)

static inline void arch_isb(void)
{
    __asm__ volatile("isb" : : : "memory");
}

static inline uint64_t arch_mpidr_affinity(void)
{
    uint64_t m = ARCH_READ_SYSREG(mpidr_el1);
    return (m & 0xffffffu) | ((m >> 8) & 0xff000000u);
}

#endif /* HYP_ARCH_CPU_H */
