/*
 * EL2 stage-1 identity map: 1 GiB blocks, devices below RAM, RAM write-back. At entry only the first
 * GiB of RAM (where the hypervisor and its payload are) is mapped; the rest of the board's RAM is added
 * once the configuration says how much there is (mmu_el2_map_ram), before any partition is loaded.
 */
#include <stdbool.h>

#include "arch/cpu.h"
#include "arch/entry.h"
#include "arm64/pgtable.h"

/* MAIR_EL2 attribute indexes. */
#define ATTR_DEVICE 0u
#define ATTR_NORMAL 1u

static uint64_t el2_l1[PT_ENTRIES] __attribute__((aligned(PAGE_SIZE)));

void mmu_el2_init(void)
{
    el2_l1[0] = 0 | PTE_VALID | PTE_S1_ATTR(ATTR_DEVICE) | PTE_AF | PTE_XN;
    el2_l1[1] = 1 * L1_BLOCK_SIZE | PTE_VALID | PTE_S1_ATTR(ATTR_NORMAL) | PTE_SH_INNER | PTE_AF;
}

bool mmu_el2_map_ram(uint64_t base, uint64_t size)
{
    uint64_t first = base / L1_BLOCK_SIZE, end = (base + size + L1_BLOCK_SIZE - 1u) / L1_BLOCK_SIZE;
    if (size == 0 || base + size < base || end > PT_ENTRIES || first == 0) {
        return false; /* beyond the 39-bit VA, or over the device block */
    }
    /* The first GiB of RAM (entry 1, the hypervisor's code) is live already and stays as it is: changing
     * a live entry would need break-before-make. The rest holds only data: never executable. */
    for (uint64_t i = first; i < end; i++) {
        if (i != 1) {
            el2_l1[i] =
                i * L1_BLOCK_SIZE | PTE_VALID | PTE_S1_ATTR(ATTR_NORMAL) | PTE_SH_INNER | PTE_AF | PTE_XN;
        }
    }
    __asm__ volatile("dsb ishst\n\ttlbi alle2\n\tdsb ish\n\tisb" : : : "memory");
    return true;
}

void mmu_el2_enable(void)
{
    ARCH_WRITE_SYSREG(mair_el2,
                      MAIR_ATTR(ATTR_DEVICE, MAIR_DEVICE_nGnRnE) | MAIR_ATTR(ATTR_NORMAL, MAIR_NORMAL_WB));
    /* 39-bit VA, write-back inner-shareable walks, 4 KiB granule, 40-bit PA. */
    ARCH_WRITE_SYSREG(tcr_el2, TCR_T0SZ(39) | TCR_IRGN0_WBWA | TCR_ORGN0_WBWA | TCR_SH0_INNER | TCR_TG0_4K |
                                   TCR_EL2_PS_40BIT | TCR_EL2_RES1);
    ARCH_WRITE_SYSREG(ttbr0_el2, (uint64_t)(uintptr_t)el2_l1);
    __asm__ volatile("dsb ish\n\ttlbi alle2\n\tdsb ish\n\tisb" : : : "memory");
    ARCH_WRITE_SYSREG(sctlr_el2, SCTLR_EL2_RES1 | SCTLR_M | SCTLR_C | SCTLR_I);
    arch_isb();
}
