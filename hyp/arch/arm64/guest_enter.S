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

/* void arch_fp_save(struct el1_state *s), void arch_fp_load(const struct el1_state *s): the FP/SIMD
 * file of the world leaving a shared CPU, and of the one coming back (struct el1_state's v, fpcr, fpsr). */
    .globl arch_fp_save
arch_fp_save:
    add     x1, x0, #EL1_V
    stp     q0, q1, [x1, #0]
    stp     q2, q3, [x1, #32]
    stp     q4, q5, [x1, #64]
    stp     q6, q7, [x1, #96]
    stp     q8, q9, [x1, #128]
    stp     q10, q11, [x1, #160]
    stp     q12, q13, [x1, #192]
    stp     q14, q15, [x1, #224]
    stp     q16, q17, [x1, #256]
    stp     q18, q19, [x1, #288]
    stp     q20, q21, [x1, #320]
    stp     q22, q23, [x1, #352]
    stp     q24, q25, [x1, #384]
    stp     q26, q27, [x1, #416]
    stp     q28, q29, [x1, #448]
    stp     q30, q31, [x1, #480]
    mrs     x2, fpcr
    mrs     x3, fpsr
    str     x2, [x0, #EL1_FPCR]
    str     x3, [x0, #EL1_FPSR]
    ret

    .globl arch_fp_load
arch_fp_load:
    add     x1, x0, #EL1_V
    ldp     q0, q1, [x1, #0]
    ldp     q2, q3, [x1, #32]
    ldp     q4, q5, [x1, #64]
    ldp     q6, q7, [x1, #96]
    ldp     q8, q9, [x1, #128]
    ldp     q10, q11, [x1, #160]
    ldp     q12, q13, [x1, #192]
    ldp     q14, q15, [x1, #224]
    ldp     q16, q17, [x1, #256]
    ldp     q18, q19, [x1, #288]
    ldp     q20, q21, [x1, #320]
    ldp     q22, q23, [x1, #352]
    ldp     q24, q25, [x1, #384]
    ldp     q26, q27, [x1, #416]
    ldp     q28, q29, [x1, #448]
    ldp     q30, q31, [x1, #480]
    ldr     x2, [x0, #EL1_FPCR]
    ldr     x3, [x0, #EL1_FPSR]
    msr     fpcr, x2
    msr     fpsr, x3
    ret

/* bool arch_ctx_save(struct hyp_ctx *c): saves the callee-saved registers and SP into c and returns
 * false; a later arch_ctx_resume(c) returns true from it (a setjmp/longjmp pair for a hypervisor task
 * paused on a stack of its own: the stack must stay untouched meanwhile). */
    .globl arch_ctx_save
arch_ctx_save:
    stp     x19, x20, [x0, #0]
    stp     x21, x22, [x0, #16]
    stp     x23, x24, [x0, #32]
    stp     x25, x26, [x0, #48]
    stp     x27, x28, [x0, #64]
    stp     x29, x30, [x0, #80]
    mov     x1, sp
    str     x1, [x0, #96]
    mov     x0, #0
    ret

    .globl arch_ctx_resume
arch_ctx_resume:
    ldp     x19, x20, [x0, #0]
    ldp     x21, x22, [x0, #16]
    ldp     x23, x24, [x0, #32]
    ldp     x25, x26, [x0, #48]
    ldp     x27, x28, [x0, #64]
    ldp     x29, x30, [x0, #80]
    ldr     x1, [x0, #96]
    mov     sp, x1
    mov     x0, #1
    ret

/* void arch_run_on_stack(void *top, void (*fn)(void *), void *arg): calls fn(arg), which never returns,
 * on the stack that ends at top. */
    .globl arch_run_on_stack
arch_run_on_stack:
    mov     sp, x0
    mov     x0, x2
    mov     x29, xzr
    blr     x1
1:  b       1b
