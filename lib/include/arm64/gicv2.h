/*
 * GICv2 architecture (Arm IHI 0048B) beyond what it shares with GICv3 (arm64/gicv3.h: INTID ranges and
 * the distributor registers both versions have at the same offsets): the distributor's banked and
 * SGI registers, the memory-mapped CPU interface (GICC, and its virtual copy GICV) and the
 * virtualisation control interface (GICH) with its list registers. Definitions only.
 */
#ifndef ARM64_GICV2_H
#define ARM64_GICV2_H

#include "arm64/gicv3.h"

/* Distributor: 4 KiB. Without affinity routing the SGI/PPI registers are banked per CPU at the SPI
 * registers' first word (ISENABLER0, IPRIORITYR0..7, ITARGETSR0..7, ICFGR0..1). */
#define GICV2_GICD_SIZE       0x1000u
#define GICD_ITARGETSR        0x0800u /* one byte per INTID: a bit per CPU interface */
#define GICD_ITARGETSR_SPAN   0x400u
#define GICD_SGIR             0x0f00u
#define GICD_CPENDSGIR        0x0f10u /* one byte per SGI (bit n: from CPU interface n) */
#define GICD_SPENDSGIR        0x0f20u
#define GICD_SGIR_SPAN        0x10u /* CPENDSGIR / SPENDSGIR: four words for 16 SGIs */
#define GICV2_GICD_ID_START   0x0fd0u
#define GICD_CTLR_ENABLE_GRP0 BIT32(0)
#define GICD_CTLR_ENABLE_GRP1 BIT32(1)
#define GICD_TYPER_CPUS_SHIFT 5 /* CPUNumber [7:5]: CPU interfaces - 1 */
#define GICD_TYPER_CPUS_MASK  0x7u
#define GICV2_MAX_CPUS        8u
/* GICD_SGIR: TargetListFilter [25:24] (0: the list, 1: every other CPU, 2: the sender), CPUTargetList
 * [23:16], SGIINTID [3:0]. */
#define GICD_SGIR_FILTER_SHIFT  24
#define GICD_SGIR_FILTER_MASK   0x3u
#define GICD_SGIR_FILTER_LIST   0u
#define GICD_SGIR_FILTER_OTHERS 1u
#define GICD_SGIR_FILTER_SELF   2u
#define GICD_SGIR_TARGETS_SHIFT 16
#define GICD_SGIR_TARGETS_MASK  0xffu
#define GICD_SGIR_INTID_MASK    0xfu

/* CPU interface (GICC) and the virtual CPU interface (GICV): 8 KiB, DIR in the second page. */
#define GICC_SIZE             0x2000u
#define GICC_CTLR             0x0000u
#define GICC_PMR              0x0004u
#define GICC_BPR              0x0008u
#define GICC_IAR              0x000cu
#define GICC_EOIR             0x0010u
#define GICC_RPR              0x0014u
#define GICC_HPPIR            0x0018u
#define GICC_APR0             0x00d0u
#define GICC_IIDR             0x00fcu
#define GICC_DIR              0x1000u
#define GICC_CTLR_ENABLE_GRP0 BIT32(0)
#define GICC_CTLR_ENABLE_GRP1 BIT32(1)
/* EOImode: EOIR drops the priority only and DIR deactivates. Bit 9 in a GIC without the Security
 * Extensions (QEMU virt with secure=off) and in the Secure copy of GICC_CTLR. */
#define GICC_CTLR_EOIMODE BIT32(9)
/* IAR / EOIR / DIR: INTID [9:0]; for an SGI, the sending CPU interface in [12:10]. */
#define GICC_IAR_INTID       0x3ffu
#define GICC_IAR_CPUID_SHIFT 10

/* Virtual interface control (GICH), one view per CPU at the same address. */
#define GICH_SIZE           0x1000u
#define GICH_HCR            0x0000u
#define GICH_VTR            0x0004u
#define GICH_VMCR           0x0008u
#define GICH_MISR           0x0010u
#define GICH_EISR0          0x0020u
#define GICH_ELRSR0         0x0030u
#define GICH_APR            0x00f0u
#define GICH_LR0            0x0100u
#define GICH_HCR_EN         BIT32(0)
#define GICH_HCR_UIE        BIT32(1) /* maintenance interrupt when at most one LR holds an interrupt */
#define GICH_VTR_LISTREGS   0x3fu    /* number of list registers - 1 */
#define GICH_MISR_EOI       BIT32(0)
#define GICH_VMCR_GRP0EN    BIT32(0)
#define GICH_VMCR_GRP1EN    BIT32(1)
#define GICH_VMCR_PMR_SHIFT 27 /* VMPriMask [31:27]: the top five bits of the guest's GICV_PMR */
#define GICH_VMCR_PMR_MASK  0x1fu
#define GICH_LR_MAX         64u

/* GICH_LR<n>: VirtualID [9:0], PhysicalID [19:10] (HW = 1), EOI [19] (HW = 0: maintenance interrupt
 * when the guest deactivates it), Priority [27:23] (the top five bits), State [29:28], Grp1 [30],
 * HW [31]. */
#define GICH_LR_VID_MASK   0x3ffu
#define GICH_LR_PID_SHIFT  10
#define GICH_LR_PID_MASK   0x3ffu
#define GICH_LR_EOI        BIT32(19)
#define GICH_LR_PRIO_SHIFT 23
#define GICH_LR_PRIO_MASK  0x1fu
#define GICH_LR_PENDING    BIT32(28)
#define GICH_LR_ACTIVE     BIT32(29)
#define GICH_LR_GROUP1     BIT32(30)
#define GICH_LR_HW         BIT32(31)

#endif /* ARM64_GICV2_H */
