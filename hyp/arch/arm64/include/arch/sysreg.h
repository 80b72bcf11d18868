/*
 * EL2 system-register fields the hypervisor uses (Arm ARM DDI 0487). Usable from C and assembly.
 */
#ifndef HYP_ARCH_SYSREG_H
#define HYP_ARCH_SYSREG_H

#ifdef __ASSEMBLER__
#define UL(x) x
#else
#define UL(x) x##ul
#endif

#define HCR_VM     (UL(1) << 0) /* stage 2 on */
#define HCR_FMO    (UL(1) << 3) /* physical FIQ to EL2, virtual FIQ to EL1 */
#define HCR_IMO    (UL(1) << 4) /* physical IRQ to EL2, virtual IRQ to EL1 */
#define HCR_AMO    (UL(1) << 5)
#define HCR_VSE    (UL(1) << 8)
#define HCR_FB     (UL(1) << 9)
#define HCR_BSU_IS (UL(1) << 10)
#define HCR_TWI    (UL(1) << 13)
#define HCR_TSC    (UL(1) << 19) /* trap SMC: PSCI from a partition never reaches firmware */
#define HCR_TACR   (UL(1) << 21)
#define HCR_RW     (UL(1) << 31)

#define SPSR_EL1H_MASKED 0x3c5
#define SCTLR_EL1_RES1   0x30d00800
#define SCTLR_EL2_RES1   0x30c50830
#define SCTLR_M          (UL(1) << 0)
#define SCTLR_C          (UL(1) << 2)
#define SCTLR_I          (UL(1) << 12)
#define CPTR_EL2_RES1    0x33ff
#define CNTHCTL_EL1PCTEN (UL(1) << 0)
#define CNTHCTL_EL1PCEN  (UL(1) << 1)

#define ICC_SRE_SRE    (UL(1) << 0)
#define ICC_SRE_ENABLE (UL(1) << 3)

/* GICv3 system registers by encoding, so any assembler accepts them. */
#define ICC_SRE_EL2     S3_4_C12_C9_5
#define ICC_SRE_EL1     S3_0_C12_C12_5
#define ICC_PMR_EL1     S3_0_C4_C6_0
#define ICC_IAR1_EL1    S3_0_C12_C12_0
#define ICC_EOIR1_EL1   S3_0_C12_C12_1
#define ICC_DIR_EL1     S3_0_C12_C11_1
#define ICC_BPR1_EL1    S3_0_C12_C12_3
#define ICC_CTLR_EL1    S3_0_C12_C12_4
#define ICC_IGRPEN1_EL1 S3_0_C12_C12_7
#define ICC_SGI1R_EL1   S3_0_C12_C11_5
#define ICH_HCR_EL2     S3_4_C12_C11_0
#define ICH_VTR_EL2     S3_4_C12_C11_1
#define ICH_VMCR_EL2    S3_4_C12_C11_7
#define ICH_ELRSR_EL2   S3_4_C12_C11_5
#define ICH_AP1R0_EL2   S3_4_C12_C9_0

/* ESR_EL2 exception classes */
#define EC_SHIFT    26
#define EC_WFX      0x01
#define EC_HVC64    0x16
#define EC_SMC64    0x17
#define EC_SYSREG   0x18
#define EC_IABT_LOW 0x20
#define EC_DABT_LOW 0x24

#endif /* HYP_ARCH_SYSREG_H */
