/*
 * AArch64 system-register fields the rtos uses (Arm ARM DDI 0487). Usable from C and assembly.
 */
#ifndef ARCH_SYSREG_H
#define ARCH_SYSREG_H

#define HCR_EL2_RW              (1 << 31)
#define CNTHCTL_EL1PCTEN        (1 << 0)
#define CNTHCTL_EL1PCEN         (1 << 1)
#define CPTR_EL2_RES1           0x33ff
#define SPSR_EL1H_MASKED        0x3c5 /* EL1h, D, A, I and F masked */
#define SCTLR_EL1_RES1          0x30d00800
#define SCTLR_M                 (1 << 0)
#define SCTLR_C                 (1 << 2)
#define SCTLR_I                 (1 << 12)
#define CPACR_FPEN_NONE_TRAPPED (3 << 20)

/* GICv3 CPU interface registers, by encoding so any assembler accepts them. */
#define ICC_SRE_EL2    S3_4_C12_C9_5
#define ICC_SRE_SRE    (1 << 0)
#define ICC_SRE_ENABLE (1 << 3)

/* Exception syndrome classes the fault reporter names. */
#define ESR_EC_SHIFT    26
#define ESR_EC_UNKNOWN  0x00
#define ESR_EC_SVC64    0x15
#define ESR_EC_IABT_LOW 0x20
#define ESR_EC_IABT_CUR 0x21
#define ESR_EC_PC_ALIGN 0x22
#define ESR_EC_DABT_LOW 0x24
#define ESR_EC_DABT_CUR 0x25
#define ESR_EC_SP_ALIGN 0x26
#define ESR_EC_BRK64    0x3c

/* Generic timer control. */
#define CNT_CTL_ENABLE  (1 << 0)
#define CNT_CTL_IMASK   (1 << 1)
#define CNT_CTL_ISTATUS (1 << 2)

#endif /* ARCH_SYSREG_H */
