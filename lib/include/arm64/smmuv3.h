/*
 * Arm SMMUv3 (IHI 0070): the registers, structures and commands the hypervisor's driver uses.
 * Definitions only. Structures are little-endian arrays of 64-bit words: a field is given as its word
 * (dword) index and its bits within that word.
 */
#ifndef ARM64_SMMUV3_H
#define ARM64_SMMUV3_H

#include "arm64/bits.h"

/* ---------------------------------------------------------------- registers (page 0 unless noted) */
#define SMMU_IDR0            0x0000u
#define SMMU_IDR1            0x0004u
#define SMMU_IDR5            0x0014u
#define SMMU_CR0             0x0020u
#define SMMU_CR0ACK          0x0024u
#define SMMU_CR1             0x0028u
#define SMMU_CR2             0x002cu
#define SMMU_GBPA            0x0044u
#define SMMU_IRQ_CTRL        0x0050u
#define SMMU_GERROR          0x0060u
#define SMMU_GERRORN         0x0064u
#define SMMU_STRTAB_BASE     0x0080u /* 64-bit */
#define SMMU_STRTAB_BASE_CFG 0x0088u
#define SMMU_CMDQ_BASE       0x0090u /* 64-bit */
#define SMMU_CMDQ_PROD       0x0098u
#define SMMU_CMDQ_CONS       0x009cu
#define SMMU_EVENTQ_BASE     0x00a0u  /* 64-bit */
#define SMMU_EVENTQ_PROD     0x100a8u /* page 1 */
#define SMMU_EVENTQ_CONS     0x100acu /* page 1 */
#define SMMU_REG_SIZE        0x20000u /* two 64 KiB pages */

#define SMMU_IDR0_S1P          BIT32(1)
#define SMMU_IDR0_TTF_SHIFT    2 /* translation table formats: 2 = AArch64, 3 = both */
#define SMMU_IDR0_TTF_MASK     0x3u
#define SMMU_IDR0_TTF_AARCH64  0x2u
#define SMMU_IDR0_COHACC       BIT32(4)
#define SMMU_IDR0_ST_LVL_SHIFT 27 /* stream table levels: 0 linear only, 1 two-level too */
#define SMMU_IDR0_ST_LVL_MASK  0x3u
#define SMMU_IDR0_ST_LVL_2LVL  0x1u
#define SMMU_IDR1_SIDSIZE_MASK 0x3fu
#define SMMU_IDR5_OAS_MASK     0x7u /* 0..6: 32, 36, 40, 42, 44, 48, 52 bits */
#define SMMU_IDR5_GRAN4K       BIT32(4)

#define SMMU_CR0_SMMUEN   BIT32(0)
#define SMMU_CR0_EVENTQEN BIT32(2)
#define SMMU_CR0_CMDQEN   BIT32(3)

/* CR1: cacheability and shareability of the SMMU's own accesses to queues and tables. */
#define SMMU_CR1_QUEUE_IC_SHIFT 0
#define SMMU_CR1_QUEUE_OC_SHIFT 2
#define SMMU_CR1_QUEUE_SH_SHIFT 4
#define SMMU_CR1_TABLE_IC_SHIFT 6
#define SMMU_CR1_TABLE_OC_SHIFT 8
#define SMMU_CR1_TABLE_SH_SHIFT 10
#define SMMU_CACHE_WB           0x1u /* write-back, read/write-allocate */
#define SMMU_SH_INNER           0x3u

#define SMMU_CR2_RECINVSID BIT32(1) /* record C_BAD_STREAMID events */
#define SMMU_CR2_PTM       BIT32(2) /* private TLB maintenance: ignore the CPUs' broadcast TLBIs */

#define SMMU_GBPA_ABORT  BIT32(20) /* with SMMUEN = 0: abort every transaction instead of bypassing */
#define SMMU_GBPA_UPDATE BIT32(31)

#define SMMU_GERROR_CMDQ_ERR BIT32(0)

#define SMMU_STRTAB_CFG_FMT_2LVL    (U(1) << 16)
#define SMMU_STRTAB_CFG_SPLIT_SHIFT 6
#define SMMU_BASE_RA                BIT(62) /* read-allocate hint of the table/queue base registers */
#define SMMU_BASE_WA                BIT(62) /* the event queue's: write-allocate */
#define SMMU_BASE_ADDR_MASK         UL(0x000fffffffffffe0)

/* Queue PROD/CONS: index in [log2size-1:0], wrap bit at [log2size]; CONS.ERR [30:24]; OVFLG [31]. */
#define SMMU_Q_OVF            BIT32(31)
#define SMMU_CMDQ_CONS_ERR(c) (((c) >> 24) & 0x7fu)

/* ---------------------------------------------------------------- stream table */
#define SMMU_STE_DWORDS       8u    /* 64 bytes */
#define SMMU_L1STD_SPAN_MASK  0x1fu /* an L1 descriptor covers 2^(Span - 1) STEs; Span 0 = invalid */
#define SMMU_L1STD_L2PTR_MASK UL(0x000fffffffffffc0)

#define SMMU_STE0_V             BIT(0)
#define SMMU_STE0_CFG_S1_TRANS  (UL(0x5) << 1) /* stage 1 translates, stage 2 bypassed */
#define SMMU_STE0_S1CTXPTR_MASK UL(0x000fffffffffffc0)
#define SMMU_STE1_S1CIR_SHIFT   2 /* CD fetch: inner cacheability, outer, shareability */
#define SMMU_STE1_S1COR_SHIFT   4
#define SMMU_STE1_S1CSH_SHIFT   6
#define SMMU_STE2_S2VMID_MASK   0xffffu

/* ---------------------------------------------------------------- context descriptor */
#define SMMU_CD_DWORDS      8u /* 64 bytes */
#define SMMU_CD0_T0SZ_SHIFT 0
#define SMMU_CD0_TG0_4K     (UL(0) << 6)
#define SMMU_CD0_IR0_SHIFT  8
#define SMMU_CD0_OR0_SHIFT  10
#define SMMU_CD0_SH0_SHIFT  12
#define SMMU_CD0_TG1_4K     (UL(2) << 22)
#define SMMU_CD0_EPD1       BIT(30) /* no walks through TTB1 */
#define SMMU_CD0_V          BIT(31)
#define SMMU_CD0_IPS_SHIFT  32 /* output size, encoded as SMMU_IDR5.OAS */
#define SMMU_CD0_AA64       BIT(41)
#define SMMU_CD0_R          BIT(45) /* record faults in the event queue */
#define SMMU_CD0_A          BIT(46) /* terminate faulting transactions with an abort */
#define SMMU_CD0_ASET       BIT(47) /* the ASID is not shared with the CPUs' broadcast TLB maintenance */
#define SMMU_CD0_ASID_SHIFT 48
#define SMMU_CD1_TTB0_MASK  UL(0x000ffffffffffff0)
#define SMMU_CD3_MAIR       3u /* dword 3 holds MAIR, laid out as MAIR_EL1 */

/* Stage-1 descriptors as the SMMU walks them: the VMSAv8-64 format (arm64/pgtable.h) plus these. */
#define SMMU_PTE_AP_RW_ANY BIT(6)  /* AP[2:1] = 0b01: read/write, privileged or not */
#define SMMU_PTE_NG        BIT(11) /* tagged with the CD's ASID */

/* ---------------------------------------------------------------- commands (16 bytes) */
#define SMMU_CMD_DWORDS         2u
#define SMMU_CMD_CFGI_STE_RANGE 0x04u /* dword 1 Range [4:0] = 31: every stream (CMD_CFGI_ALL) */
#define SMMU_CMD_CFGI_ALL_RANGE 31u
#define SMMU_CMD_TLBI_NSNH_ALL  0x30u
#define SMMU_CMD_SYNC           0x46u

/* ---------------------------------------------------------------- event records (32 bytes) */
#define SMMU_EVT_DWORDS     4u
#define SMMU_EVT0_TYPE_MASK 0xffu
#define SMMU_EVT0_SID_SHIFT 32
#define SMMU_EVT1_RNW       BIT(35) /* the faulting access was a read */
#define SMMU_EVT_ADDR       2u      /* dword 2: input address (translation-related events) */

#define SMMU_EVT_F_UUT              0x01u
#define SMMU_EVT_C_BAD_STREAMID     0x02u
#define SMMU_EVT_F_STE_FETCH        0x03u
#define SMMU_EVT_C_BAD_STE          0x04u
#define SMMU_EVT_F_STREAM_DISABLED  0x06u
#define SMMU_EVT_F_TRANSL_FORBIDDEN 0x07u
#define SMMU_EVT_C_BAD_SUBSTREAMID  0x08u
#define SMMU_EVT_F_CD_FETCH         0x09u
#define SMMU_EVT_C_BAD_CD           0x0au
#define SMMU_EVT_F_WALK_EABT        0x0bu
#define SMMU_EVT_F_TRANSLATION      0x10u
#define SMMU_EVT_F_ADDR_SIZE        0x11u
#define SMMU_EVT_F_ACCESS           0x12u
#define SMMU_EVT_F_PERMISSION       0x13u

#endif /* ARM64_SMMUV3_H */
