/*
 * The EL2 -> EL1 drop of the rtos's entry points (start.S, secondary.S); assembly only. At EL2 the rtos
 * sets up just enough of EL2 to run as a plain EL1 kernel (the same binary runs in a partition).
 */
#ifndef ARCH_EL2_DROP_H
#define ARCH_EL2_DROP_H

#ifdef __ASSEMBLER__
/* clang-format off */
.macro drop_to_el1 target
    /* EL2 -> EL1 with x0 as scratch; EL1 resumes at \target with the MMU off and IRQs masked. */
    mov     x0, #HCR_EL2_RW             /* EL1 is AArch64; no traps, no stage 2 */
    msr     hcr_el2, x0
    mrs     x0, cnthctl_el2
    orr     x0, x0, #(CNTHCTL_EL1PCTEN | CNTHCTL_EL1PCEN)
    msr     cnthctl_el2, x0             /* EL1 may use the physical counter and timer */
    msr     cntvoff_el2, xzr            /* virtual time == physical time */
    mrs     x0, id_aa64pfr0_el1
    ubfx    x0, x0, #ID_PFR0_GIC_SHIFT, #4
    cbz     x0, 8f                      /* a GICv2: no system-register interface to open */
    mrs     x0, ICC_SRE_EL2
    orr     x0, x0, #ICC_SRE_SRE
    orr     x0, x0, #ICC_SRE_ENABLE
    msr     ICC_SRE_EL2, x0             /* EL1 may use the GIC system-register interface */
    isb
8:
    mov     x0, #CPTR_EL2_RES1          /* no FP/SIMD traps */
    msr     cptr_el2, x0
    msr     hstr_el2, xzr
    mrs     x0, midr_el1
    msr     vpidr_el2, x0
    mrs     x0, mpidr_el1
    msr     vmpidr_el2, x0
    ldr     x0, =SCTLR_EL1_RES1         /* MMU and caches off until arch_mmu_init */
    msr     sctlr_el1, x0
    mov     x0, #SPSR_EL1H_MASKED
    msr     spsr_el2, x0
    adr     x0, \target
    msr     elr_el2, x0
    eret
.endm
/* clang-format on */
#endif

#endif /* ARCH_EL2_DROP_H */
