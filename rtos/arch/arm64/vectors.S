/*
 * EL1 exception vectors. The rtos runs only at EL1 with SP_EL1 (EL1h): every thread runs on its own
 * stack, and an exception pushes a struct arch_frame onto the stack it interrupted. An interrupt taken
 * in a thread saves the thread's frame there and runs the handlers on the interrupt stack
 * (arch_irq_stack), with IRQs unmasked: a more urgent interrupt nests, its frame on the interrupt stack
 * (docs/architecture.md, "Interrupts"). So a thread's stack needs room for one frame and the kernel's
 * switch path, whatever the handlers do.
 */
#include "asm-offsets.h"
#include "arm64/esr.h"
#include "arm64/sysreg.h"

#define KIND_SYNC 0
#define KIND_IRQ 1
#define KIND_FIQ 2
#define KIND_SERROR 3
#define KIND_SP0 4
#define KIND_LOWER 5

/*
 * An interrupt's frame: the same layout, but only what the C code it calls may change: x0-x18 and x30
 * (caller-saved), x19 (irq_entry's own), ELR and SPSR. x20-x29 are callee-saved, so every function the
 * entry calls gives them back, and a switch at the outermost exit saves them in the thread's context;
 * their slots stay unwritten.
 */
.macro save_irq_frame
    sub     sp, sp, #FRAME_SIZE
    stp     x0, x1, [sp, #0]
    stp     x2, x3, [sp, #16]
    stp     x4, x5, [sp, #32]
    stp     x6, x7, [sp, #48]
    stp     x8, x9, [sp, #64]
    stp     x10, x11, [sp, #80]
    stp     x12, x13, [sp, #96]
    stp     x14, x15, [sp, #112]
    stp     x16, x17, [sp, #128]
    stp     x18, x19, [sp, #144]
    mrs     x0, elr_el1
    mrs     x1, spsr_el1
    stp     x30, x0, [sp, #FRAME_X30]
    str     x1, [sp, #FRAME_SPSR]
.endm

.macro restore_irq_frame
    ldp     x30, x0, [sp, #FRAME_X30]
    ldr     x1, [sp, #FRAME_SPSR]
    msr     elr_el1, x0
    msr     spsr_el1, x1
    ldp     x0, x1, [sp, #0]
    ldp     x2, x3, [sp, #16]
    ldp     x4, x5, [sp, #32]
    ldp     x6, x7, [sp, #48]
    ldp     x8, x9, [sp, #64]
    ldp     x10, x11, [sp, #80]
    ldp     x12, x13, [sp, #96]
    ldp     x14, x15, [sp, #112]
    ldp     x16, x17, [sp, #128]
    ldp     x18, x19, [sp, #144]
    add     sp, sp, #FRAME_SIZE
.endm

/* A fault's frame: every general register, for the report (fault.c); a fault never returns. */
.macro save_frame
    save_irq_frame
    stp     x20, x21, [sp, #160]
    stp     x22, x23, [sp, #176]
    stp     x24, x25, [sp, #192]
    stp     x26, x27, [sp, #208]
    stp     x28, x29, [sp, #224]
.endm

.macro vector target
    .balign 0x80
    b       \target
.endm

.macro bad_vector kind
    .balign 0x80
    save_frame
    mov     x0, sp
    mov     x1, #\kind
    b       bad_exception
.endm

    .section .text.vectors, "ax"
    .balign 2048
    .globl arch_vectors
arch_vectors:
    bad_vector KIND_SP0                 /* current EL with SP_EL0: the rtos never uses SP_EL0 */
    bad_vector KIND_SP0
    bad_vector KIND_SP0
    bad_vector KIND_SP0
    vector  sync_entry                  /* current EL with SP_EL1 */
    vector  irq_entry
    bad_vector KIND_FIQ
    bad_vector KIND_SERROR
    bad_vector KIND_LOWER               /* lower EL: the rtos has no EL0 */
    bad_vector KIND_LOWER
    bad_vector KIND_LOWER
    bad_vector KIND_LOWER
    bad_vector KIND_LOWER
    bad_vector KIND_LOWER
    bad_vector KIND_LOWER
    bad_vector KIND_LOWER

    .text
/*
 * x19 is callee-saved, and saved in the frame: it carries the thread's stack pointer across the
 * handlers. The interrupted code was a handler <=> SP lies in the interrupt stack (a thread's SP never
 * does): then this is a nested level, which neither switches stacks nor schedules.
 */
irq_entry:
    save_irq_frame
    adrp    x0, arch_irq_stack
    add     x0, x0, :lo12:arch_irq_stack
    mov     x19, sp
    sub     x1, x19, x0
    cmp     x1, #IRQ_STACK_SIZE
    b.lo    irq_nested
    add     sp, x0, #IRQ_STACK_SIZE
    bl      k_irq_handle                /* the handlers; returns with IRQs masked */
    mov     sp, x19
    bl      k_irq_exit                  /* may switch threads; returns when this one runs again */
    restore_irq_frame
    eret

irq_nested:
    bl      k_irq_handle
    restore_irq_frame
    eret

/*
 * A synchronous exception. An FP/SIMD trap is either a thread's first FP/SIMD instruction since its
 * start (FP/SIMD traps while a thread that has not used it runs: the kernel gives it the registers,
 * k_fp_first_use, and the instruction is retried) or, on the interrupt stack, the first FP/SIMD
 * instruction of a nesting level's handlers (arch_irq_fp_enter made it trap): save v0-v31, FPCR and
 * FPSR as the level found them into its area (*arch_irq_fp_slot), enable FP/SIMD, give the handler FPCR
 * 0 (round to nearest, no exception traps, no flush to zero) and retry the instruction. Every other
 * class is a fault and reported.
 */
sync_entry:
    stp     x0, x1, [sp, #-16]!
    mrs     x0, esr_el1
    ubfx    x0, x0, #ESR_EC_SHIFT, #6
    cmp     x0, #EC_FP_ASIMD
    b.eq    fp_first_use
    ldp     x0, x1, [sp], #16
    save_frame
    mov     x0, sp
    bl      k_sync_exception            /* reports and stops; never returns */
1:  b       1b

fp_first_use:
    adrp    x0, arch_irq_stack
    add     x0, x0, :lo12:arch_irq_stack
    mov     x1, sp
    sub     x1, x1, x0
    cmp     x1, #IRQ_STACK_SIZE
    b.lo    irq_fp_first_use
    ldp     x0, x1, [sp], #16
    save_irq_frame
    bl      k_fp_first_use
    restore_irq_frame
    eret                                /* ELR_EL1: the trapped instruction, run again */

irq_fp_first_use:
    mov     x0, #CPACR_EL1_FPEN_NONE_TRAPPED
    msr     cpacr_el1, x0
    isb                                 /* the stores below must not trap */
    adrp    x0, arch_irq_fp_slot
    ldr     x0, [x0, :lo12:arch_irq_fp_slot]
    stp     q0, q1, [x0, #FPR_Q + 0]
    stp     q2, q3, [x0, #FPR_Q + 32]
    stp     q4, q5, [x0, #FPR_Q + 64]
    stp     q6, q7, [x0, #FPR_Q + 96]
    stp     q8, q9, [x0, #FPR_Q + 128]
    stp     q10, q11, [x0, #FPR_Q + 160]
    stp     q12, q13, [x0, #FPR_Q + 192]
    stp     q14, q15, [x0, #FPR_Q + 224]
    stp     q16, q17, [x0, #FPR_Q + 256]
    stp     q18, q19, [x0, #FPR_Q + 288]
    stp     q20, q21, [x0, #FPR_Q + 320]
    stp     q22, q23, [x0, #FPR_Q + 352]
    stp     q24, q25, [x0, #FPR_Q + 384]
    stp     q26, q27, [x0, #FPR_Q + 416]
    stp     q28, q29, [x0, #FPR_Q + 448]
    stp     q30, q31, [x0, #FPR_Q + 480]
    mrs     x1, fpcr
    str     x1, [x0, #FPR_FPCR]
    mrs     x1, fpsr
    str     x1, [x0, #FPR_FPSR]
    msr     fpcr, xzr
    ldp     x0, x1, [sp], #16
    eret                                /* ELR_EL1: the trapped instruction, run again */

bad_exception:
    bl      k_bad_exception             /* never returns */
1:  b       1b
