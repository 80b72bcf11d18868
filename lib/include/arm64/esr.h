/*
 * ESR_ELx: exception syndrome layout (Arm ARM DDI 0487, D17.2.37). Definitions only; usable from C and
 * assembly.
 */
#ifndef ARM64_ESR_H
#define ARM64_ESR_H

#include "arm64/sysreg.h"

#define ESR_EC_SHIFT 26
#define ESR_EC_MASK  0x3fu
#define ESR_EC(esr)  (((esr) >> ESR_EC_SHIFT) & ESR_EC_MASK)
#define ESR_IL       BIT(25) /* 32-bit instruction */
#define ESR_ISS_MASK 0x1ffffffu

/* Exception classes. A "_LOW" class is taken from a lower EL, "_CUR" from the same EL (LOW | 1). */
#define ESR_EC_UNKNOWN  0x00u
#define ESR_EC_WFX      0x01u
#define ESR_EC_FP_ASIMD 0x07u /* FP/SIMD access trapped by CPACR_EL1.FPEN (or CPTR_EL2) */
#define ESR_EC_SVC64    0x15u
#define ESR_EC_HVC64    0x16u
#define ESR_EC_SMC64    0x17u
#define ESR_EC_SYSREG   0x18u /* MSR/MRS/system instruction trapped */
#define ESR_EC_IABT_LOW 0x20u
#define ESR_EC_IABT_CUR 0x21u
#define ESR_EC_PC_ALIGN 0x22u
#define ESR_EC_DABT_LOW 0x24u
#define ESR_EC_DABT_CUR 0x25u
#define ESR_EC_SP_ALIGN 0x26u
#define ESR_EC_BRK64    0x3cu
#define ESR_EC_CUR_EL   0x01u /* IABT/DABT: the same-EL class is the lower-EL class with bit 0 set */

/* Data abort ISS. ISV says whether SAS..SF describe the access (a single load/store to one register). */
#define ESR_DABT_ISV       BIT(24)
#define ESR_DABT_SAS_SHIFT 22 /* access size: 1 << SAS bytes */
#define ESR_DABT_SAS_MASK  0x3u
#define ESR_DABT_SSE       BIT(21) /* sign-extend the loaded value */
#define ESR_DABT_SRT_SHIFT 16      /* register transferred (31 = XZR) */
#define ESR_DABT_SRT_MASK  0x1fu
#define ESR_DABT_SF        BIT(15) /* 64-bit register */
#define ESR_DABT_WNR       BIT(6)  /* write, not read */
#define ESR_FSC_MASK       0x3fu
#define ESR_FSC_SEA        0x10u /* synchronous external abort, not on a table walk */

/* Trapped MSR/MRS ISS (EC 0x18): Op0 [21:20], Op2 [19:17], Op1 [16:14], CRn [13:10], Rt [9:5],
 * CRm [4:1], Direction [0] (1 = read). */
#define ESR_SYSREG_OP0(esr)  (((esr) >> 20) & 3u)
#define ESR_SYSREG_OP2(esr)  (((esr) >> 17) & 7u)
#define ESR_SYSREG_OP1(esr)  (((esr) >> 14) & 7u)
#define ESR_SYSREG_CRN(esr)  (((esr) >> 10) & 15u)
#define ESR_SYSREG_RT(esr)   (((esr) >> 5) & 31u)
#define ESR_SYSREG_CRM(esr)  (((esr) >> 1) & 15u)
#define ESR_SYSREG_READ(esr) ((esr)&1u)

/* Register number meaning XZR in SRT/Rt fields. */
#define ESR_REG_ZR 31u

/* Vector table offsets from VBAR_ELx for a synchronous exception, by where it came from. */
#define VECTOR_CUR_SP0 0x000u
#define VECTOR_CUR_SPX 0x200u
#define VECTOR_LOW_A64 0x400u
#define VECTOR_LOW_A32 0x600u

#endif /* ARM64_ESR_H */
