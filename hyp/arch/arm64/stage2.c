/*
 * Stage-2 translation tables for the partitions (4 KiB granule, 39-bit IPA, level-1 root). Tables come
 * from a static pool and are never freed: partitions are fixed at boot.
 */
#include "arch/stage2.h"

#include "arch/cpu.h"
#include "arm64/pgtable.h"
#include "arm64/sysreg.h"
#include "hyp/assert.h"
#include "hyp/printf.h"

static uint64_t s2_pool[S2_POOL_PAGES][PT_ENTRIES] __attribute__((aligned(PAGE_SIZE)));
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
    return (uint64_t *)(uintptr_t)(*entry & PTE_ADDR_MASK);
}

void s2_map(uint64_t *root, uint64_t ipa, uint64_t pa, uint64_t size, bool device)
{
    uint64_t attr = (device ? PTE_S2_MEMATTR_DEVICE | PTE_XN : PTE_S2_MEMATTR_NORMAL_WB | PTE_SH_INNER) |
                    PTE_S2_AP_RW | PTE_AF;
    HYP_ASSERT(((ipa | pa) & (PAGE_SIZE - 1u)) == 0);                     /* callers map whole pages */
    HYP_ASSERT(ipa + size <= (1ull << S2_IPA_BITS) && ipa + size >= ipa); /* inside the IPA space */
    while (size > 0) {
        uint64_t *l1e = &root[(ipa >> L1_BLOCK_SHIFT) & PT_INDEX_MASK];
        if (((ipa | pa) & (L1_BLOCK_SIZE - 1u)) == 0 && size >= L1_BLOCK_SIZE) {
            *l1e = pa | attr | PTE_VALID;
            ipa += L1_BLOCK_SIZE, pa += L1_BLOCK_SIZE, size -= L1_BLOCK_SIZE;
            continue;
        }
        uint64_t *l2 = next_table(l1e);
        uint64_t *l2e = &l2[(ipa >> L2_BLOCK_SHIFT) & PT_INDEX_MASK];
        if (((ipa | pa) & (L2_BLOCK_SIZE - 1u)) == 0 && size >= L2_BLOCK_SIZE) {
            *l2e = pa | attr | PTE_VALID;
            ipa += L2_BLOCK_SIZE, pa += L2_BLOCK_SIZE, size -= L2_BLOCK_SIZE;
            continue;
        }
        uint64_t *l3 = next_table(l2e);
        l3[(ipa >> PAGE_SHIFT) & PT_INDEX_MASK] = pa | attr | PTE_VALID | PTE_PAGE;
        ipa += PAGE_SIZE, pa += PAGE_SIZE, size = size > PAGE_SIZE ? size - PAGE_SIZE : 0;
    }
    arch_dsb_ishst();
}

uint64_t s2_vttbr(const uint64_t *root, unsigned vmid)
{
    return (uint64_t)(uintptr_t)root | ((uint64_t)vmid << VTTBR_EL2_VMID_SHIFT);
}
