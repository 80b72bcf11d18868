/*
 * Return into a partition: load the guest's registers from struct guest_regs and eret. The only way
 * EL2 code goes to EL1 (first entry, after a trap, after a reset).
 */
#include "asm-offsets.h"

    .text
/*
 * void arch_guest_enter(struct guest_regs *regs): load the guest's registers and eret into it. The
 * hypervisor keeps nothing on its stack while a guest runs, so the stack starts empty again here: a
 * path that enters the guest from deep in C (a reset, the first entry) leaves no frames behind, and
 * however often a guest resets, the stack never grows into what lies below it.
 */
    .globl arch_guest_enter
arch_guest_enter:
    mrs     x1, tpidr_el2               /* this CPU's struct vcpu */
    ldr     w1, [x1, #VCPU_CPU]
    add     x1, x1, #1
    mov     x2, #HYP_STACK_BYTES
    ldr     x3, =hyp_stacks
    madd    x3, x1, x2, x3              /* top of this CPU's stack */
    mov     sp, x3
    ldp     x30, x2, [x0, #GUEST_X30]
    ldr     x3, [x0, #GUEST_SPSR]
    msr     elr_el2, x2
    msr     spsr_el2, x3
    ldp     x2, x3, [x0, #16]
    ldp     x4, x5, [x0, #32]
    ldp     x6, x7, [x0, #48]
    ldp     x8, x9, [x0, #64]
    ldp     x10, x11, [x0, #80]
    ldp     x12, x13, [x0, #96]
    ldp     x14, x15, [x0, #112]
    ldp     x16, x17, [x0, #128]
    ldp     x18, x19, [x0, #144]
    ldp     x20, x21, [x0, #160]
    ldp     x22, x23, [x0, #176]
    ldp     x24, x25, [x0, #192]
    ldp     x26, x27, [x0, #208]
    ldp     x28, x29, [x0, #224]
    ldp     x0, x1, [x0, #0]
    eret

/* void arch_fp_reset(void): zeroes the FP/SIMD registers, FPCR and FPSR (a partition's new start must
 * not see its previous run's values). EL2 does not trap FP (CPTR_EL2.TFP clear). */
    .globl arch_fp_reset
arch_fp_reset:
    movi    v0.2d, #0
    movi    v1.2d, #0
    movi    v2.2d, #0
    movi    v3.2d, #0
    movi    v4.2d, #0
    movi    v5.2d, #0
    movi    v6.2d, #0
    movi    v7.2d, #0
    movi    v8.2d, #0
    movi    v9.2d, #0
    movi    v10.2d, #0
    movi    v11.2d, #0
    movi    v12.2d, #0
    movi    v13.2d, #0
    movi    v14.2d, #0
    movi    v15.2d, #0
    movi    v16.2d, #0
    movi    v17.2d, #0
    movi    v18.2d, #0
    movi    v19.2d, #0
    movi    v20.2d, #0
    movi    v21.2d, #0
    movi    v22.2d, #0
    movi    v23.2d, #0
    movi    v24.2d, #0
    movi    v25.2d, #0
    movi    v26.2d, #0
    movi    v27.2d, #0
    movi    v28.2d, #0
    movi    v29.2d, #0
    movi    v30.2d, #0
    movi    v31.2d, #0
    msr     fpcr, xzr
    msr     fpsr, xzr
    ret
