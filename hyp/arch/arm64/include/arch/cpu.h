/*
 * Small inline CPU operations for EL2 code. (Host unit tests replace this header.)
 */
#ifndef HYP_ARCH_CPU_H
#define HYP_ARCH_CPU_H

#include <stdint.h>

#include "arm64/sysreg.h"

static inline void arch_isb(void)
{
    __asm__ volatile("isb" : : : "memory");
}

/* Stores to translation tables are visible to the table walker before the next walk. */
static inline void arch_dsb_ishst(void)
{
    __asm__ volatile("dsb ishst" : : : "memory");
}

/* Newly written instructions (loaded images) are visible to every CPU's instruction fetch: the
 * invalidation is broadcast (inner shareable), since a partition's other CPUs run what one CPU loaded. */
static inline void arch_sync_icache(void)
{
    __asm__ volatile("dsb sy\n\tic ialluis\n\tdsb sy\n\tisb" : : : "memory");
}

/* CTR_EL0.DminLine: log2 of the smallest data cache line, in 4-byte words. */
#define CTR_DMINLINE_SHIFT 16
#define CTR_DMINLINE_MASK  0xfu

/* Writes [p, p + n) back to the point of coherency and drops it from the data caches: a guest that
 * starts with its MMU and caches off reads memory, not what the hypervisor's cached writes left. */
static inline void arch_dcache_clean_inval_poc(const void *p, uint64_t n)
{
    uint64_t line = 4ull << ((ARCH_READ_SYSREG(ctr_el0) >> CTR_DMINLINE_SHIFT) & CTR_DMINLINE_MASK);
    uint64_t a = (uint64_t)(uintptr_t)p & ~(line - 1u), end = (uint64_t)(uintptr_t)p + n;
    for (; a < end; a += line) {
        __asm__ volatile("dc civac, %0" : : "r"(a) : "memory");
    }
    __asm__ volatile("dsb sy" : : : "memory");
}

/* DCZID_EL0: BS [3:0], log2 of the DC ZVA block in 4-byte words; DZP [4], DC ZVA prohibited. */
#define DCZID_BS_MASK 0xfu
#define DCZID_DZP     (1u << 4)

/* Zeroes [p, p + n): with DC ZVA (one instruction per block, 64 bytes on Cortex-A cores and QEMU) when
 * the CPU permits it and both ends are block-aligned (partition RAM and its pieces are), else with
 * doubleword stores when 8-aligned, else byte by byte. Normal memory only (DC ZVA faults on Device). */
static inline void arch_zero(void *p, uint64_t n)
{
    uint64_t dczid = ARCH_READ_SYSREG(dczid_el0);
    uint64_t a = (uint64_t)(uintptr_t)p, end = a + n;
    uint64_t block = 4ull << (dczid & DCZID_BS_MASK);
    if ((dczid & DCZID_DZP) == 0 && ((a | n) & (block - 1u)) == 0) {
        for (; a < end; a += block) {
            __asm__ volatile("dc zva, %0" : : "r"(a) : "memory");
        }
        return;
    }
    if (((a | n) & 7u) == 0) {
        for (; a < end; a += 8u) {
            *(volatile uint64_t *)(uintptr_t)a = 0;
        }
        return;
    }
    for (; a < end; a++) {
        *(volatile uint8_t *)(uintptr_t)a = 0;
    }
}

/* A hint that this CPU is in a long loop: under QEMU icount it ends the vCPU's time slice. */
static inline void arch_yield(void)
{
    __asm__ volatile("yield" : : : "memory");
}

static inline void arch_wfi(void)
{
    __asm__ volatile("wfi" : : : "memory");
}

static inline void arch_irq_enable(void)
{
    __asm__ volatile("msr daifclr, #2\n\tisb" : : : "memory");
}

static inline void arch_irq_disable(void)
{
    __asm__ volatile("msr daifset, #2" : : : "memory");
}

static inline uint64_t arch_counter(void)
{
    return ARCH_READ_SYSREG(cntpct_el0);
}

static inline uint64_t arch_counter_hz(void)
{
    return ARCH_READ_SYSREG(cntfrq_el0) & CNTFRQ_MASK;
}

static inline uint64_t arch_mpidr_affinity(void)
{
    return mpidr_affinity(ARCH_READ_SYSREG(mpidr_el1));
}

#endif /* HYP_ARCH_CPU_H */
