/*
 * GICv3 architecture (Arm IHI 0069): distributor and redistributor register offsets and fields, CPU
 * interface and virtualisation system registers (by encoding, so any assembler accepts them), list
 * register layout and accessor. Definitions only.
 */
#ifndef ARM64_GICV3_H
#define ARM64_GICV3_H

#include "arm64/sysreg.h"

/* INTID ranges. */
#define GIC_SGI_COUNT     16u
#define GIC_SPI_BASE      32u /* INTIDs below are SGIs and PPIs (private to a CPU) */
#define GIC_PPI_BASE      16u
#define GIC_INTID_SPECIAL 1020u /* 1020..1023: special (1023 = nothing pending) */
#define GIC_INTID_MASK    0xffffffu

/* Distributor (GICD_*), offsets from its base. */
#define GICD_SIZE        0x10000u
#define GICD_CTLR        0x0000u
#define GICD_TYPER       0x0004u
#define GICD_IIDR        0x0008u
#define GICD_TYPER2      0x000cu
#define GICD_IGROUPR     0x0080u
#define GICD_ISENABLER   0x0100u
#define GICD_ICENABLER   0x0180u
#define GICD_ISPENDR     0x0200u
#define GICD_ICPENDR     0x0280u
#define GICD_ISACTIVER   0x0300u
#define GICD_ICACTIVER   0x0380u
#define GICD_IPRIORITYR  0x0400u
#define GICD_ICFGR       0x0c00u
#define GICD_IGRPMODR    0x0d00u
#define GICD_IROUTER     0x6000u
#define GICD_IROUTER_END 0x7fe0u /* IROUTER<n> exists for n = 32..1019 */
#define GICD_ID_START    0xffd0u /* identification registers up to the end of the frame */
#define GICD_CTLR_RWP    BIT32(31)
#define GICD_CTLR_ARE_NS BIT32(4)
#define GICD_CTLR_GRP1NS BIT32(1)
#define GICD_TYPER_LINES 0x1fu /* ITLinesNumber: (N + 1) * 32 INTIDs */
#define GICD_TYPER_LPIS  BIT32(17)
/* Bit-per-interrupt registers span 0x80 bytes (1024 INTIDs); priority one byte, config two bits each. */
#define GICD_BITREG_SPAN     0x80u
#define GICD_IPRIORITYR_SPAN 0x400u
#define GICD_ICFGR_SPAN      0x100u
#define GICD_IGRPMODR_SPAN   0x80u
/* ICFGR<n>: two bits per interrupt, 16 per register; the upper one set means edge-triggered. */
#define GIC_ICFGR_EDGE(intid) (2u << (2u * ((intid) % 16u)))

/* Redistributor: RD_base frame then SGI_base frame, 64 KiB each. */
#define GICR_FRAME_SIZE      0x10000u
#define GICR_STRIDE          0x20000u
#define GICR_CTLR            0x0000u
#define GICR_TYPER           0x0008u
#define GICR_WAKER           0x0014u
#define GICR_PIDR2           0xffe8u
#define GICR_ID_START        0xffd0u
#define GICR_SGI_OFFSET      GICR_FRAME_SIZE
#define GICR_TYPER_LAST      (UL(1) << 4)
#define GICR_TYPER_AFF_SHIFT 32
#define GICR_WAKER_PS        BIT32(1) /* ProcessorSleep */
#define GICR_CTLR_RWP        BIT32(3) /* an enable-clear write is still in progress */
#define GICR_WAKER_CA        BIT32(2) /* ChildrenAsleep */
/* SGI_base frame registers: the SGI/PPI copies of the distributor's, at the same offsets. */
#define GICR_IGROUPR0    GICD_IGROUPR
#define GICR_ISENABLER0  GICD_ISENABLER
#define GICR_ICENABLER0  GICD_ICENABLER
#define GICR_ISPENDR0    GICD_ISPENDR
#define GICR_ICPENDR0    GICD_ICPENDR
#define GICR_ISACTIVER0  GICD_ISACTIVER
#define GICR_ICACTIVER0  GICD_ICACTIVER
#define GICR_IPRIORITYR0 GICD_IPRIORITYR
#define GICR_ICFGR0      GICD_ICFGR        /* SGIs: read-only */
#define GICR_ICFGR1      (GICD_ICFGR + 4u) /* PPIs */

/* CPU interface (ICC_*) and virtualisation control (ICH_*) system registers. */
#define ICC_PMR_EL1     S3_0_C4_C6_0
#define ICC_IAR1_EL1    S3_0_C12_C12_0
#define ICC_EOIR1_EL1   S3_0_C12_C12_1
#define ICC_HPPIR1_EL1  S3_0_C12_C12_2 /* highest pending Group 1 interrupt, not acknowledged */
#define ICC_BPR1_EL1    S3_0_C12_C12_3
#define ICC_CTLR_EL1    S3_0_C12_C12_4
#define ICC_SRE_EL1     S3_0_C12_C12_5
#define ICC_IGRPEN1_EL1 S3_0_C12_C12_7
#define ICC_DIR_EL1     S3_0_C12_C11_1
#define ICC_SGI1R_EL1   S3_0_C12_C11_5
#define ICC_SRE_EL2     S3_4_C12_C9_5
#define ICH_AP0R0_EL2   S3_4_C12_C8_0
#define ICH_AP1R0_EL2   S3_4_C12_C9_0
#define ICC_AP1R0_EL1   S3_0_C12_C9_0
#define ICC_RPR_EL1     S3_0_C12_C11_3
#define ICH_HCR_EL2     S3_4_C12_C11_0
#define ICH_VTR_EL2     S3_4_C12_C11_1
#define ICH_MISR_EL2    S3_4_C12_C11_2
#define ICH_EISR_EL2    S3_4_C12_C11_3
#define ICH_ELRSR_EL2   S3_4_C12_C11_5
#define ICH_VMCR_EL2    S3_4_C12_C11_7

#define ICC_SRE_SRE         BIT(0) /* system-register interface */
#define ICC_SRE_ENABLE      BIT(3) /* EL2: lower ELs may use it */
#define ICC_CTLR_EOIMODE    BIT(1) /* EOIR drops priority only; DIR deactivates */
#define ICC_PMR_UNMASKED    0xffu  /* every priority passes */
#define ICC_IGRPEN1_EN      BIT(0)
#define ICH_HCR_EN          BIT(0)
#define ICH_HCR_UIE         BIT(1)  /* maintenance interrupt when at most one LR holds an interrupt */
#define ICH_HCR_TALL1       BIT(12) /* trap EL1's Group 1 ICC_/ICV_ accesses (IAR1, EOIR1, ...) to EL2 */
#define ICH_VMCR_VENG1      BIT(1)  /* the guest's Group 1 enable */
#define ICH_VMCR_VPMR_SHIFT 24      /* the guest's priority mask, bits [31:24] */
#define ICH_MISR_EOI        BIT(0)
#define ICH_VTR_LISTREGS    0x1fu /* number of list registers - 1 */

/* ICC_SGI1R_EL1: TargetList [15:0], Aff1 [23:16], INTID [27:24], Aff2 [39:32], IRM [40], Aff3 [55:48]. */
#define ICC_SGI1R_TARGETS         0xffffu
#define ICC_SGI1R_AFF1_SHIFT      16
#define ICC_SGI1R_INTID_SHIFT     24
#define ICC_SGI1R_AFF2_SHIFT      32
#define ICC_SGI1R_IRM             (UL(1) << 40) /* every PE but the sender */
#define ICC_SGI1R_AFF3_SHIFT      48
#define ICC_SGI1R_TARGET_AFF0_MAX 16u /* TargetList names Aff0 0..15 */
/* Every EL1 CPU-interface register that ICH_HCR_EL2.TALL1 traps (IAR1, EOIR1, HPPIR1, BPR1, AP1R<n>,
 * IGRPEN1) is encoded at op0 3, op1 0, CRn 12, as a trapped MRS/MSR reports it (ESR ISS). */
#define ICC_EL1_OP0 3u
#define ICC_EL1_OP1 0u
#define ICC_EL1_CRN 12u
/* The encoding of ICC_SGI1R_EL1 as a trapped MSR reports it (ESR ISS Op0/Op1/CRn/CRm/Op2), and of its
 * Group 0 and alias siblings ICC_ASGI1R_EL1 (Op2 6) and ICC_SGI0R_EL1 (Op2 7). */
#define ICC_SGIR_OP0   3u
#define ICC_SGIR_OP1   0u
#define ICC_SGIR_CRN   12u
#define ICC_SGIR_CRM   11u
#define ICC_SGI1R_OP2  5u
#define ICC_ASGI1R_OP2 6u
#define ICC_SGI0R_OP2  7u

/* ICH_LR<n>_EL2: vINTID [31:0], pINTID [44:32], Priority [55:48], Group [60], HW [61], State [63:62]. */
#define ICH_LR_VINTID_MASK  0xffffffffu
#define ICH_LR_PINTID_SHIFT 32
#define ICH_LR_PINTID_MASK  0x1fffu
#define ICH_LR_EOI          (UL(1) << 41) /* HW = 0: maintenance interrupt when the guest deactivates */
#define ICH_LR_PRIO_SHIFT   48
#define ICH_LR_GROUP1       (UL(1) << 60)
#define ICH_LR_HW           (UL(1) << 61)
#define ICH_LR_PENDING      (UL(1) << 62)
#define ICH_LR_ACTIVE       (UL(1) << 63)
#define ICH_LR_MAX          16u

#ifndef __ASSEMBLER__
/* The ICC_SGI1R_EL1 value that sends SGI `sgi` to the CPU with affinity `aff` (packed as MPIDR_EL1's
 * affinity fields; Aff0 below ICC_SGI1R_TARGET_AFF0_MAX, as on QEMU virt). */
static inline uint64_t icc_sgi1r(uint64_t aff, unsigned sgi)
{
    return (1ull << (MPIDR_AFF0(aff) % ICC_SGI1R_TARGET_AFF0_MAX)) |
           (MPIDR_AFF1(aff) << ICC_SGI1R_AFF1_SHIFT) |
           ((uint64_t)(sgi % GIC_SGI_COUNT) << ICC_SGI1R_INTID_SHIFT) |
           (MPIDR_AFF2(aff) << ICC_SGI1R_AFF2_SHIFT) | (MPIDR_AFF3(aff) << ICC_SGI1R_AFF3_SHIFT);
}

/* List register n (below the implemented count, ICH_VTR_EL2). A switch, because the instruction names
 * the register: ICH_LR<n>_EL2 is S3_4_C12_C12_<n> for n < 8 and S3_4_C12_C13_<n - 8> above. */
static inline uint64_t ich_lr_read(unsigned n)
{
    switch (n) {
    case 0:
        return ARCH_READ_SYSREG(S3_4_C12_C12_0);
    case 1:
        return ARCH_READ_SYSREG(S3_4_C12_C12_1);
    case 2:
        return ARCH_READ_SYSREG(S3_4_C12_C12_2);
    case 3:
        return ARCH_READ_SYSREG(S3_4_C12_C12_3);
    case 4:
        return ARCH_READ_SYSREG(S3_4_C12_C12_4);
    case 5:
        return ARCH_READ_SYSREG(S3_4_C12_C12_5);
    case 6:
        return ARCH_READ_SYSREG(S3_4_C12_C12_6);
    case 7:
        return ARCH_READ_SYSREG(S3_4_C12_C12_7);
    case 8:
        return ARCH_READ_SYSREG(S3_4_C12_C13_0);
    case 9:
        return ARCH_READ_SYSREG(S3_4_C12_C13_1);
    case 10:
        return ARCH_READ_SYSREG(S3_4_C12_C13_2);
    case 11:
        return ARCH_READ_SYSREG(S3_4_C12_C13_3);
    case 12:
        return ARCH_READ_SYSREG(S3_4_C12_C13_4);
    case 13:
        return ARCH_READ_SYSREG(S3_4_C12_C13_5);
    case 14:
        return ARCH_READ_SYSREG(S3_4_C12_C13_6);
    case 15:
        return ARCH_READ_SYSREG(S3_4_C12_C13_7);
    default:
        return 0;
    }
}

static inline void ich_lr_write(unsigned n, uint64_t v)
{
    switch (n) {
    case 0:
        ARCH_WRITE_SYSREG(S3_4_C12_C12_0, v);
        break;
    case 1:
        ARCH_WRITE_SYSREG(S3_4_C12_C12_1, v);
        break;
    case 2:
        ARCH_WRITE_SYSREG(S3_4_C12_C12_2, v);
        break;
    case 3:
        ARCH_WRITE_SYSREG(S3_4_C12_C12_3, v);
        break;
    case 4:
        ARCH_WRITE_SYSREG(S3_4_C12_C12_4, v);
        break;
    case 5:
        ARCH_WRITE_SYSREG(S3_4_C12_C12_5, v);
        break;
    case 6:
        ARCH_WRITE_SYSREG(S3_4_C12_C12_6, v);
        break;
    case 7:
        ARCH_WRITE_SYSREG(S3_4_C12_C12_7, v);
        break;
    case 8:
        ARCH_WRITE_SYSREG(S3_4_C12_C13_0, v);
        break;
    case 9:
        ARCH_WRITE_SYSREG(S3_4_C12_C13_1, v);
        break;
    case 10:
        ARCH_WRITE_SYSREG(S3_4_C12_C13_2, v);
        break;
    case 11:
        ARCH_WRITE_SYSREG(S3_4_C12_C13_3, v);
        break;
    case 12:
        ARCH_WRITE_SYSREG(S3_4_C12_C13_4, v);
        break;
    case 13:
        ARCH_WRITE_SYSREG(S3_4_C12_C13_5, v);
        break;
    case 14:
        ARCH_WRITE_SYSREG(S3_4_C12_C13_6, v);
        break;
    case 15:
        ARCH_WRITE_SYSREG(S3_4_C12_C13_7, v);
        break;
    default:
        break;
    }
}
#endif

#endif /* ARM64_GICV3_H */
