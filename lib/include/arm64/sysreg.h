/*
 * AArch64 system registers: the accessors and the fields both images use (Arm ARM DDI 0487).
 * Definitions only. Usable from C and assembly.
 */
#ifndef ARM64_SYSREG_H
#define ARM64_SYSREG_H

#include "arm64/bits.h"

#ifndef __ASSEMBLER__
#include <stdint.h>
#endif

/* MDCR_EL2: PMU and debug registers of lower ELs trap to EL2; HPMN counters stay EL1's. */
#define MDCR_EL2_HPMN_MASK 0x1fu
#define MDCR_EL2_TPMCR     BIT(5)  /* PMCR_EL0 */
#define MDCR_EL2_TPM       BIT(6)  /* every PMU register */
#define MDCR_EL2_TDA       BIT(9)  /* debug registers other than the OS lock and DBGDTR */
#define MDCR_EL2_TDOSA     BIT(10) /* OS lock and power-down registers */
#define MDCR_EL2_TDRA      BIT(11) /* debug ROM address registers */
#define MDCR_EL2_TPMS      BIT(14) /* statistical profiling (SPE) */
#define MDCR_EL2_HPMD      BIT(17) /* no event counting at EL2 (PMUv3p1 and later) */
#define MDCR_EL2_TTRF      BIT(19) /* trace filter control */
#define MDCR_EL2_HCCD      BIT(23) /* no cycle counting at EL2 (PMUv3p5 and later) */

/* PMU (PMUv3) */
#define PMCR_E       BIT(0) /* PMCR_EL0: counters enabled */
#define PMCR_P       BIT(1) /* PMCR_EL0: event counters reset to 0 (write) */
#define PMCR_C       BIT(2) /* PMCR_EL0: cycle counter reset to 0 (write) */
#define PMCR_LC      BIT(6) /* PMCR_EL0: the cycle counter overflows at 64 bits */
#define PMCR_N_SHIFT 11     /* PMCR_EL0.N: event counters implemented */
#define PMCR_N_MASK  0x1fu
/* PMCNTEN*, PMINTEN*, PMOVS*: every event counter and the cycle counter (bit 31). */
#define PMU_ALL_COUNTERS 0xffffffffu

/* ID_AA64PFR0_EL1.GIC: 0 when the CPU has no GICv3 system-register interface (a GICv2 board). */
#define ID_PFR0_GIC_SHIFT 24
#define ID_PFR0_GIC_MASK  0xfu

/* ID_AA64DFR0_EL1 */
#define ID_DFR0_BRPS_SHIFT    12 /* breakpoints implemented, minus one */
#define ID_DFR0_WRPS_SHIFT    20 /* watchpoints implemented, minus one */
#define ID_DFR0_PMUVER_SHIFT  8
#define ID_DFR0_FIELD_MASK    0xfu
#define ID_DFR0_PMUVER_V3P1   4u   /* MDCR_EL2.HPMD */
#define ID_DFR0_PMUVER_V3P5   6u   /* MDCR_EL2.HCCD */
#define ID_DFR0_PMUVER_IMPDEF 0xfu /* not the architecture's PMU */

/* MDSCR_EL1 */
#define MDSCR_SS  BIT(0)  /* software step */
#define MDSCR_KDE BIT(13) /* debug exceptions at the debug target EL itself (with PSTATE.D clear) */
#define MDSCR_MDE BIT(15) /* breakpoints and watchpoints */

/* OSLAR_EL1.OSLK: the OS lock, set at a cold reset (debug exceptions off until the OS clears it). */
#define OSLAR_OSLK 1u

/* HCR_EL2 */
#define HCR_EL2_VM     BIT(0)  /* stage 2 on */
#define HCR_EL2_FMO    BIT(3)  /* physical FIQ to EL2, virtual FIQ to EL1 */
#define HCR_EL2_IMO    BIT(4)  /* physical IRQ to EL2, virtual IRQ to EL1 */
#define HCR_EL2_AMO    BIT(5)  /* physical SError to EL2 */
#define HCR_EL2_VSE    BIT(8)  /* virtual SError pending */
#define HCR_EL2_FB     BIT(9)  /* broadcast TLB and I-cache maintenance */
#define HCR_EL2_BSU_IS BIT(10) /* barriers at least inner shareable */
#define HCR_EL2_TWI    BIT(13) /* trap WFI */
#define HCR_EL2_TSC    BIT(19) /* trap SMC */
#define HCR_EL2_TIDCP  BIT(20) /* trap implementation-defined system registers */
#define HCR_EL2_TACR   BIT(21) /* trap the auxiliary control registers (ACTLR_EL1) */
#define HCR_EL2_TSW    BIT(22) /* trap data cache maintenance by set/way */
#define HCR_EL2_RW     BIT(31) /* EL1 is AArch64 */

/* SPSR_ELx: EL1h with D, A, I and F masked, the state every partition and the rtos start in. */
#define SPSR_EL1H_MASKED 0x3c5
#define SPSR_M_MASK      0xf     /* M[3:0]: exception level and stack; 0 = EL0t */
#define SPSR_M_SPX       BIT(0)  /* handler stack (EL1h rather than EL1t) */
#define SPSR_M_AARCH32   BIT(4)  /* the exception came from AArch32 */
#define DAIF_I           BIT(7)  /* IRQ mask bit in DAIF as mrs reads it */
#define SPSR_I           BIT(7)  /* the interrupted context had IRQs masked (PSTATE.I) */
#define SPSR_SS          BIT(21) /* software step: the next instruction is stepped (active-not-pending) */

/* SCTLR_ELx */
#define SCTLR_EL1_RES1 0x30d00800
#define SCTLR_EL2_RES1 0x30c50830
#define SCTLR_M        BIT(0)  /* stage-1 MMU */
#define SCTLR_C        BIT(2)  /* data cacheable */
#define SCTLR_I        BIT(12) /* instruction cacheable */

/* CPTR_EL2 (HCR_EL2.E2H = 0): RES1 bits only, i.e. no FP/SIMD or trace traps. */
#define CPTR_EL2_RES1 0x33ff
/* CPACR_EL1.FPEN = 0b11: FP/SIMD not trapped at EL0 or EL1; 0b00: trapped at both (the rtos while an
 * interrupt handler runs; every other field of its CPACR_EL1 is 0 too). */
#define CPACR_EL1_FPEN_NONE_TRAPPED (UL(3) << 20)
#define CPACR_EL1_FPEN_ALL_TRAPPED  0

/* CNTHCTL_EL2 (E2H = 0): EL1 and EL0 may read the physical counter and use the physical timer. */
#define CNTHCTL_EL1PCTEN BIT(0)
#define CNTHCTL_EL1PCEN  BIT(1)

/* CNT{P,V,HP}_CTL_EL0/EL2 */
#define CNT_CTL_ENABLE  BIT(0)
#define CNT_CTL_IMASK   BIT(1)
#define CNT_CTL_ISTATUS BIT(2)
/* CNTFRQ_EL0 holds the frequency in its low 32 bits; the upper half is RES0. */
#define CNTFRQ_MASK 0xffffffffu

/* MPIDR_EL1: Aff0..Aff2 at [23:0], Aff3 at [39:32]. Affinity = Aff3:Aff2:Aff1:Aff0 packed in 32 bits, as
 * GICR_TYPER[63:32] and GICD_IROUTER write it. */
#define MPIDR_AFF012_MASK 0xffffffu
#define MPIDR_AFF3_SHIFT  32
#define MPIDR_AFF0(m)     ((m)&0xffu)
#define MPIDR_AFF1(m)     (((m) >> 8) & 0xffu)
#define MPIDR_AFF2(m)     (((m) >> 16) & 0xffu)
#define MPIDR_AFF3(m)     (((m) >> 24) & 0xffu) /* of a packed affinity */

/* TCR_ELx / VTCR_EL2 fields (same positions for T0SZ, IRGN0, ORGN0, SH0, TG0). */
#define TCR_T0SZ(va_bits)    (UL(64) - (va_bits))
#define TCR_IRGN0_WBWA       (UL(1) << 8)
#define TCR_ORGN0_WBWA       (UL(1) << 10)
#define TCR_SH0_INNER        (UL(3) << 12)
#define TCR_TG0_4K           (UL(0) << 14)
#define TCR_EL1_EPD1         (UL(1) << 23) /* no TTBR1 walks */
#define TCR_EL1_IPS_40BIT    (UL(2) << 32)
#define TCR_EL2_PS_40BIT     (UL(2) << 16)
#define TCR_EL2_RES1         (BIT(23) | BIT(31))
#define VTCR_EL2_SL0_L1      (UL(1) << 6) /* 4 KiB granule: walks start at level 1 */
#define VTCR_EL2_PS_40BIT    (UL(2) << 16)
#define VTCR_EL2_RES1        BIT(31)
#define VTTBR_EL2_VMID_SHIFT 48

/* MAIR attribute encodings. */
#define MAIR_DEVICE_nGnRnE 0x00u
#define MAIR_NORMAL_WB     0xffu /* inner/outer write-back, read/write allocate */
#define MAIR_ATTR(idx, a)  ((uint64_t)(a) << (8u * (idx)))

#ifndef __ASSEMBLER__
#define ARCH_READ_SYSREG(reg)                         \
    ({                                                \
        uint64_t v_;                                  \
        __asm__ volatile("mrs %0, " #reg : "=r"(v_)); \
        v_;                                           \
    })
#define ARCH_WRITE_SYSREG(reg, v) __asm__ volatile("msr " #reg ", %0" : : "r"((uint64_t)(v)) : "memory")

/* The 32-bit affinity (Aff3:Aff2:Aff1:Aff0) of an MPIDR_EL1 value. */
static inline uint64_t mpidr_affinity(uint64_t mpidr)
{
    return (mpidr & MPIDR_AFF012_MASK) | ((mpidr >> 8) & 0xff000000u);
}
#endif

#endif /* ARM64_SYSREG_H */
