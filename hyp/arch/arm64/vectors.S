/*
 * EL2 vectors. Exceptions from the partitions (lower EL, AArch64) save the guest registers into the
 * current CPU's struct vcpu (TPIDR_EL2) and call C; returning resumes the guest. Exceptions taken while
 * in the hypervisor itself are fatal, except IRQs, which the Linux CPU takes while it waits.
 */
#include "asm-offsets.h"

.macro save_guest
    stp     x0, x1, [sp, #-16]!
    mrs     x0, tpidr_el2
    stp     x2, x3, [x0, #16]
    stp     x4, x5, [x0, #32]
    stp     x6, x7, [x0, #48]
    stp     x8, x9, [x0, #64]
    stp     x10, x11, [x0, #80]
    stp     x12, x13, [x0, #96]
    stp     x14, x15, [x0, #112]
    stp     x16, x17, [x0, #128]
    stp     x18, x19, [x0, #144]
    stp     x20, x21, [x0, #160]
    stp     x22, x23, [x0, #176]
    stp     x24, x25, [x0, #192]
    stp     x26, x27, [x0, #208]
    stp     x28, x29, [x0, #224]
    ldp     x2, x3, [sp], #16
    stp     x2, x3, [x0, #0]
    mrs     x2, elr_el2
    mrs     x3, spsr_el2
    stp     x30, x2, [x0, #GUEST_X30]
    str     x3, [x0, #GUEST_SPSR]
.endm

.macro bad kind
    .balign 0x80
    mov     x0, #\kind
    mrs     x1, esr_el2
    mrs     x2, elr_el2
    mrs     x3, far_el2
    b       hyp_bad_exception
.endm

    .section .text.vectors, "ax"
    .balign 2048
    .globl hyp_vectors
hyp_vectors:
    bad     0                           /* EL2 with SP_EL0 */
    bad     1
    bad     2
    bad     3
    bad     4                           /* EL2 with SP_EL2: sync */
    .balign 0x80
    b       el2_irq                     /* EL2 IRQ */
    bad     6
    bad     7
    .balign 0x80                        /* lower EL AArch64: sync */
    save_guest
    bl      hyp_guest_sync
    b       guest_return
    .balign 0x80                        /* lower EL AArch64: IRQ */
    save_guest
    bl      hyp_guest_irq
    b       guest_return
    .balign 0x80                        /* lower EL AArch64: FIQ (a Group 0 interrupt): as an IRQ */
    save_guest
    bl      hyp_guest_irq
    b       guest_return
    .balign 0x80                        /* lower EL AArch64: SError, the partition's own fault */
    save_guest
    bl      hyp_guest_serror
    b       guest_return
    bad     12                          /* lower EL AArch32: none */
    bad     13
    bad     14
    bad     15

    .text
el2_irq:
    stp     x0, x1, [sp, #-16]!
    stp     x2, x3, [sp, #-16]!
    stp     x4, x5, [sp, #-16]!
    stp     x6, x7, [sp, #-16]!
    stp     x8, x9, [sp, #-16]!
    stp     x10, x11, [sp, #-16]!
    stp     x12, x13, [sp, #-16]!
    stp     x14, x15, [sp, #-16]!
    stp     x16, x17, [sp, #-16]!
    stp     x18, x30, [sp, #-16]!
    mrs     x0, elr_el2
    mrs     x1, spsr_el2
    stp     x0, x1, [sp, #-16]!
    bl      hyp_el2_irq
    ldp     x0, x1, [sp], #16
    msr     elr_el2, x0
    msr     spsr_el2, x1
    ldp     x18, x30, [sp], #16
    ldp     x16, x17, [sp], #16
    ldp     x14, x15, [sp], #16
    ldp     x12, x13, [sp], #16
    ldp     x10, x11, [sp], #16
    ldp     x8, x9, [sp], #16
    ldp     x6, x7, [sp], #16
    ldp     x4, x5, [sp], #16
    ldp     x2, x3, [sp], #16
    ldp     x0, x1, [sp], #16
    eret

guest_return:
    mrs     x0, tpidr_el2               /* struct vcpu, whose first member is the guest's registers */
    b       arch_guest_enter
