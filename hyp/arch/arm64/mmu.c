/*
 * EL2 stage-1 identity map, and stage-2 tables for the partitions (4 KiB granule).
 */
#include <stdint.h>

#include "arch/cpu.h"
#include "hyp/hyp.h"

#define PTE_VALID (1ull << 0)
#define PTE_TABLE (1ull << 1) /* at levels 1-2: next-level table; at level 3: page */
#define PTE_AF    (1ull << 10)
#define PTE_SH_IN (3ull << 8)
#define PTE_XN    (1ull << 54)
#define ADDR_MASK 0x0000fffffffff000ull
#define GIB       (1ull << 30)
#define MIB2      (1ull << 21)
#define KIB4      (1ull << 12)

/* ---- EL2 stage 1: 1 GiB blocks, devices below RAM, RAM write-back. ---- */
#define S1_ATTR(i) ((uint64_t)(i) << 2)
static uint64_t el2_l1[512] __attribute__((aligned(4096)));

void mmu_el2_init(void)
{
    el2_l1[0] = 0 | PTE_VALID | S1_ATTR(0) | PTE_AF | PTE_XN;
    el2_l1[1] = 1 * GIB | PTE_VALID | S1_ATTR(1) | PTE_SH_IN | PTE_AF;
}

void mmu_el2_enable(void);
void mmu_el2_enable(void)
{
    ARCH_WRITE_SYSREG(mair_el2, 0x00ull | (0xffull << 8));
    /* T0SZ=25 (39-bit VA), WB cacheable walks, inner shareable, 4 KiB, PS 40-bit, RES1 bits 31/23. */
    ARCH_WRITE_SYSREG(tcr_el2,
                      25u | (1u << 8) | (1u << 10) | (3u << 12) | (2u << 16) | (1u << 23) | (1u << 31));
    ARCH_WRITE_SYSREG(ttbr0_el2, (uint64_t)(uintptr_t)el2_l1);
    __asm__ volatile("dsb ish\n\ttlbi alle2\n\tdsb ish\n\tisb" : : : "memory");
    ARCH_WRITE_SYSREG(sctlr_el2, SCTLR_EL2_RES1 | SCTLR_M | SCTLR_C | SCTLR_I);
    arch_isb();
}

/* ---- stage 2 ---- */
#define S2_MEMATTR_NORMAL (0xfull << 2) /* outer/inner write-back */
#define S2_MEMATTR_DEVICE (0x1ull << 2) /* Device-nGnRE */
#define S2_AP_RW          (3ull << 6)

#define S2_POOL_PAGES 96u
static uint64_t s2_pool[S2_POOL_PAGES][512] __attribute__((aligned(4096)));
static unsigned s2_used;

static uint64_t *s2_alloc(void)
{
    if (s2_used == S2_POOL_PAGES) {
        hyp_panic("stage-2 table pool exhausted (%u pages)", S2_POOL_PAGES);
    }
    return s2_pool[s2_used++]; /* BSS: already zero */
}

uint64_t *s2_new_root(void)
{
    return s2_alloc();
}

static uint64_t *next_table(uint64_t *entry)
{
    if (!(*entry & PTE_VALID)) {
        uint64_t *t = s2_alloc();
        *entry = (uint64_t)(uintptr_t)t | PTE_VALID | PTE_TABLE;
    } else if (!(*entry & PTE_TABLE)) {
        hyp_panic("stage 2: mapping splits an existing block");
    }
    return (uint64_t *)(uintptr_t)(*entry & ADDR_MASK);
}

/* Maps [ipa, ipa+size) to pa with the largest blocks alignment allows (root = level 1, 39-bit IPA). */
void s2_map(uint64_t *root, uint64_t ipa, uint64_t pa, uint64_t size, bool device)
{
    uint64_t attr = (device ? S2_MEMATTR_DEVICE | PTE_XN : S2_MEMATTR_NORMAL | PTE_SH_IN) | S2_AP_RW | PTE_AF;
    while (size > 0) {
        uint64_t *l1e = &root[(ipa >> 30) & 511];
        if (((ipa | pa) & (GIB - 1)) == 0 && size >= GIB) {
            *l1e = pa | attr | PTE_VALID;
            ipa += GIB, pa += GIB, size -= GIB;
            continue;
        }
        uint64_t *l2 = next_table(l1e);
        uint64_t *l2e = &l2[(ipa >> 21) & 511];
        if (((ipa | pa) & (MIB2 - 1)) == 0 && size >= MIB2) {
            *l2e = pa | attr | PTE_VALID;
            ipa += MIB2, pa += MIB2, size -= MIB2;
            continue;
        }
        uint64_t *l3 = next_table(l2e);
        l3[(ipa >> 12) & 511] = pa | attr | PTE_VALID | PTE_TABLE;
        ipa += KIB4, pa += KIB4, size = size > KIB4 ? size - KIB4 : 0;
    }
    __asm__ volatile("dsb ishst" : : : "memory");
}
