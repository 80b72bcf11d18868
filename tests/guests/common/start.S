/*
 * Entry and EL1 exception vectors of the bare-metal test guests. Position independent (PC-relative
 * addressing only), so a guest runs wherever a partition's configuration loads it: its C code must not
 * keep absolute addresses in initialised data (no tables of pointers).
 */
#include "arm64/image.h"

/* Register frame the vectors save: x0..x30, ELR, SPSR, ESR (struct guest_frame in guest.h). */
#define FRAME_SIZE 272
#define STACK_SIZE 16384
/* Further CPUs (guest_secondary_entry): GUEST_CPU_SLOTS stacks of CPU_STACK_SIZE (guest.h). */
#define CPU_STACK_SIZE 8192
#define CPU_SLOT_MASK  3

    .section .text.head, "ax"
    ARM64_IMAGE_HEADER entry

    .section .text.boot, "ax"
entry:
    mov     x19, x0                     /* the DTB, as the boot protocol gives it */
    adrp    x1, guest_stack
    add     x1, x1, :lo12:guest_stack
    add     sp, x1, #STACK_SIZE
    adr     x1, guest_vectors
    msr     vbar_el1, x1
    mov     x1, #(3 << 20)              /* CPACR_EL1.FPEN: FP/SIMD without traps */
    msr     cpacr_el1, x1
    isb
    adrp    x0, _bss_start
    add     x0, x0, :lo12:_bss_start
    adrp    x1, _bss_end
    add     x1, x1, :lo12:_bss_end
1:  cmp     x0, x1
    b.hs    2f
    str     xzr, [x0], #8
    b       1b
2:  mov     x0, x19
    bl      guest_start
3:  wfe
    b       3b

/* A further CPU, started with PSCI CPU_ON at this address: x0 = the context id, whose low bits choose
 * its stack slot (guest.h: guest_cpu_on). No BSS clear: the boot CPU did it. */
    .globl guest_secondary_entry
guest_secondary_entry:
    mov     x19, x0
    and     x1, x0, #CPU_SLOT_MASK
    add     x1, x1, #1
    mov     x2, #CPU_STACK_SIZE
    adrp    x3, guest_cpu_stacks
    add     x3, x3, :lo12:guest_cpu_stacks
    madd    x3, x1, x2, x3
    mov     sp, x3
    adr     x1, guest_vectors
    msr     vbar_el1, x1
    mov     x1, #(3 << 20)
    msr     cpacr_el1, x1
    isb
    mov     x0, x19
    bl      guest_secondary
4:  wfe
    b       4b

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
    mrs     x0, elr_el1
    stp     x30, x0, [sp, #240]
    mrs     x0, spsr_el1
    mrs     x1, esr_el1
    stp     x0, x1, [sp, #256]
    mov     x0, sp
.endm

.macro vector handler
    .balign 0x80
    save_frame
    bl      \handler
    b       restore_frame
.endm

    .section .text.vectors, "ax"
    .balign 2048
guest_vectors:
    vector  guest_bad_exception         /* EL1t */
    vector  guest_bad_exception
    vector  guest_bad_exception
    vector  guest_bad_exception
    vector  guest_sync                  /* EL1h */
    vector  guest_irq
    vector  guest_bad_exception
    vector  guest_serror
    vector  guest_bad_exception         /* lower EL: no EL0 in the test guests */
    vector  guest_bad_exception
    vector  guest_bad_exception
    vector  guest_bad_exception
    vector  guest_bad_exception
    vector  guest_bad_exception
    vector  guest_bad_exception
    vector  guest_bad_exception

restore_frame:
    ldp     x0, x1, [sp, #256]
    msr     spsr_el1, x0
    ldp     x30, x0, [sp, #240]
    msr     elr_el1, x0
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
    eret

    .section .bss
    .balign 16
guest_stack:
    .space  STACK_SIZE
guest_cpu_stacks:
    .space  CPU_STACK_SIZE * (CPU_SLOT_MASK + 1)
