/*
 * void arch_switch(struct arch_context *from, struct arch_context *to)
 * Called with IRQs masked. Saves the caller's callee-saved state into *from and resumes *to where it
 * last called arch_switch (or at arch_thread_start for a new thread). FP/SIMD is not touched: the kernel
 * switches it lazily, only between threads that use it (arch_fp_save, arch_fp_load).
 */
#include "asm-offsets.h"

    .text
    .globl arch_switch
    .type arch_switch, %function
arch_switch:
    stp     x19, x20, [x0, #CTX_X19 + 0]
    stp     x21, x22, [x0, #CTX_X19 + 16]
    stp     x23, x24, [x0, #CTX_X19 + 32]
    stp     x25, x26, [x0, #CTX_X19 + 48]
    stp     x27, x28, [x0, #CTX_X19 + 64]
    stp     x29, x30, [x0, #CTX_FP]
    mov     x9, sp
    str     x9, [x0, #CTX_SP]
    /* TPIDR_EL0 is not saved: it never changes after arch_context_init set it (context.h) */
    ldr     x9, [x1, #CTX_TPIDR]
    msr     tpidr_el0, x9
    ldp     x19, x20, [x1, #CTX_X19 + 0]
    ldp     x21, x22, [x1, #CTX_X19 + 16]
    ldp     x23, x24, [x1, #CTX_X19 + 32]
    ldp     x25, x26, [x1, #CTX_X19 + 48]
    ldp     x27, x28, [x1, #CTX_X19 + 64]
    ldp     x29, x30, [x1, #CTX_FP]
    ldr     x9, [x1, #CTX_SP]
    mov     sp, x9
    ret
    .size arch_switch, . - arch_switch

/* void arch_fp_save(struct arch_context *ctx): v0-v31, FPCR and FPSR into *ctx. FP/SIMD enabled. */
    .globl arch_fp_save
    .type arch_fp_save, %function
arch_fp_save:
    mrs     x9, fpcr
    mrs     x10, fpsr
    stp     x9, x10, [x0, #CTX_FPCR]
    add     x9, x0, #CTX_Q
    stp     q0, q1, [x9, #0]
    stp     q2, q3, [x9, #32]
    stp     q4, q5, [x9, #64]
    stp     q6, q7, [x9, #96]
    stp     q8, q9, [x9, #128]
    stp     q10, q11, [x9, #160]
    stp     q12, q13, [x9, #192]
    stp     q14, q15, [x9, #224]
    stp     q16, q17, [x9, #256]
    stp     q18, q19, [x9, #288]
    stp     q20, q21, [x9, #320]
    stp     q22, q23, [x9, #352]
    stp     q24, q25, [x9, #384]
    stp     q26, q27, [x9, #416]
    stp     q28, q29, [x9, #448]
    stp     q30, q31, [x9, #480]
    ret
    .size arch_fp_save, . - arch_fp_save

/* void arch_fp_load(const struct arch_context *ctx): the reverse. FP/SIMD enabled; only the kernel
 * (built without FP/SIMD) calls it, since it changes d8-d15, which AAPCS64 has callers keep. */
    .globl arch_fp_load
    .type arch_fp_load, %function
arch_fp_load:
    add     x9, x0, #CTX_Q
    ldp     q0, q1, [x9, #0]
    ldp     q2, q3, [x9, #32]
    ldp     q4, q5, [x9, #64]
    ldp     q6, q7, [x9, #96]
    ldp     q8, q9, [x9, #128]
    ldp     q10, q11, [x9, #160]
    ldp     q12, q13, [x9, #192]
    ldp     q14, q15, [x9, #224]
    ldp     q16, q17, [x9, #256]
    ldp     q18, q19, [x9, #288]
    ldp     q20, q21, [x9, #320]
    ldp     q22, q23, [x9, #352]
    ldp     q24, q25, [x9, #384]
    ldp     q26, q27, [x9, #416]
    ldp     q28, q29, [x9, #448]
    ldp     q30, q31, [x9, #480]
    ldp     x9, x10, [x0, #CTX_FPCR]
    msr     fpcr, x9
    msr     fpsr, x10
    ret
    .size arch_fp_load, . - arch_fp_load

/*
 * First code of every thread: arch_context_init() leaves entry in x19, its argument in x20 and the
 * kernel's thread main function in x21.
 */
    .cfi_sections .debug_frame          /* unwind information for debuggers only: nothing is loaded */
    .globl arch_thread_start
    .type arch_thread_start, %function
arch_thread_start:
    .cfi_startproc
    .cfi_undefined x30                  /* a thread's outermost frame: gdb's backtrace ends here */
    mov     x0, x19
    mov     x1, x20
    mov     x29, xzr                    /* terminate frame-pointer chains for debuggers */
    blr     x21                         /* k_thread_main(entry, arg): never returns */
1:  b       1b
    .cfi_endproc
    .size arch_thread_start, . - arch_thread_start

/*
 * void arch_irq_fp_restore(const struct arch_fp_regs *regs): *regs (saved by a nesting level's first
 * FP/SIMD instruction, vectors.S) back into v0-v31, FPCR and FPSR (arch/cpu.h). Here, not in vectors.S
 * (which calls the kernel, while the kernel calls this) or cpu.c (which calls arch_thread_start): no
 * dependency cycle.
 */
    .globl arch_irq_fp_restore
    .type arch_irq_fp_restore, %function
arch_irq_fp_restore:
    ldp     q0, q1, [x0, #FPR_Q + 0]
    ldp     q2, q3, [x0, #FPR_Q + 32]
    ldp     q4, q5, [x0, #FPR_Q + 64]
    ldp     q6, q7, [x0, #FPR_Q + 96]
    ldp     q8, q9, [x0, #FPR_Q + 128]
    ldp     q10, q11, [x0, #FPR_Q + 160]
    ldp     q12, q13, [x0, #FPR_Q + 192]
    ldp     q14, q15, [x0, #FPR_Q + 224]
    ldp     q16, q17, [x0, #FPR_Q + 256]
    ldp     q18, q19, [x0, #FPR_Q + 288]
    ldp     q20, q21, [x0, #FPR_Q + 320]
    ldp     q22, q23, [x0, #FPR_Q + 352]
    ldp     q24, q25, [x0, #FPR_Q + 384]
    ldp     q26, q27, [x0, #FPR_Q + 416]
    ldp     q28, q29, [x0, #FPR_Q + 448]
    ldp     q30, q31, [x0, #FPR_Q + 480]
    ldr     x1, [x0, #FPR_FPCR]
    msr     fpcr, x1
    ldr     x1, [x0, #FPR_FPSR]
    msr     fpsr, x1
    ret
    .size arch_irq_fp_restore, . - arch_irq_fp_restore
