/*
 * EL1 exception vectors. The rtos runs only at EL1 with SP_EL1 (EL1h): every thread runs on its own
 * stack, and an exception pushes a struct arch_frame onto the interrupted thread's stack. IRQs stay
 * masked for the whole handler (no nesting; see docs/architecture.md), so each thread stack needs room
 * for one frame plus the deepest handler.
 */
#include "asm-offsets.h"

#define KIND_SYNC 0
#define KIND_IRQ 1
#define KIND_FIQ 2
#define KIND_SERROR 3
#define KIND_SP0 4
#define KIND_LOWER 5

.macro save_frame
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
    stp     x20, x21, [sp, #160]
    stp     x22, x23, [sp, #176]
    stp     x24, x25, [sp, #192]
    stp     x26, x27, [sp, #208]
    stp     x28, x29, [sp, #224]
    mrs     x21, elr_el1
    mrs     x22, spsr_el1
    stp     x30, x21, [sp, #FRAME_X30]
    str     x22, [sp, #FRAME_SPSR]
.endm

.macro restore_frame
    ldp     x30, x21, [sp, #FRAME_X30]
    ldr     x22, [sp, #FRAME_SPSR]
    msr     elr_el1, x21
    msr     spsr_el1, x22
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
    ldp     x20, x21, [sp, #160]
    ldp     x22, x23, [sp, #176]
    ldp     x24, x25, [sp, #192]
    ldp     x26, x27, [sp, #208]
    ldp     x28, x29, [sp, #224]
    add     sp, sp, #FRAME_SIZE
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
irq_entry:
    save_frame
    bl      k_irq_entry                 /* may switch threads; returns when this one runs again */
    restore_frame
    eret

sync_entry:
    save_frame
    mov     x0, sp
    bl      k_sync_exception            /* reports and stops; never returns */
1:  b       1b

bad_exception:
    bl      k_bad_exception             /* never returns */
1:  b       1b
