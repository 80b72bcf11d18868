/*
 * VMSAv8-64 translation table descriptors, 4 KiB granule (Arm ARM DDI 0487, D8.3): stage 1 and stage 2.
 * Definitions only.
 */
#ifndef ARM64_PGTABLE_H
#define ARM64_PGTABLE_H

#include "arm64/bits.h"

#define PT_ENTRIES     512u /* 4 KiB table of 8-byte descriptors */
#define PAGE_SHIFT     12
#define PAGE_SIZE      (UL(1) << PAGE_SHIFT)
#define L2_BLOCK_SHIFT 21 /* a level-2 block maps 2 MiB */
#define L1_BLOCK_SHIFT 30 /* a level-1 block maps 1 GiB */
#define L2_BLOCK_SIZE  (UL(1) << L2_BLOCK_SHIFT)
#define L1_BLOCK_SIZE  (UL(1) << L1_BLOCK_SHIFT)
#define PT_INDEX_MASK  0x1ffu

#define PTE_VALID     BIT(0)
#define PTE_TABLE     BIT(1) /* levels 0-2: next-level table (else block); level 3: must be set (page) */
#define PTE_PAGE      BIT(1)
#define PTE_SH_INNER  (UL(3) << 8)
#define PTE_AF        BIT(10)
#define PTE_PXN       BIT(53)
#define PTE_XN        BIT(54) /* stage 1: UXN; stage 2: XN */
#define PTE_ADDR_MASK UL(0x0000fffffffff000)

/* Stage 1: AttrIndx [4:2] selects a MAIR_ELx byte. */
#define PTE_S1_ATTR(idx) ((UL(0) + (idx)) << 2)

/* Stage 2: MemAttr [5:2] directly, S2AP [7:6]. */
#define PTE_S2_MEMATTR_NORMAL_WB (UL(0xf) << 2) /* outer and inner write-back */
#define PTE_S2_MEMATTR_DEVICE    (UL(0x1) << 2) /* Device-nGnRE */
#define PTE_S2_AP_RW             (UL(3) << 6)

#endif /* ARM64_PGTABLE_H */
