/*
 * Return into a partition: load the guest's registers from struct guest_regs and eret. The only way
 * EL2 code goes to EL1 (first entry, after a trap, after a reset).
 */
#include "asm-offsets.h"

    .text
/* void arch_guest_enter(struct guest_regs *regs): load the guest's registers and eret into it. */
    .globl arch_guest_enter
arch_guest_enter:
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
