/*
 * Entry of a second CPU started by arch_cpu_start (rtos/lib/cpuload.c, measurements only). Kept apart
 * from start.S, which enters the kernel: this CPU never does.
 */
#include "asm-offsets.h"
#include "arm64/gicv3.h"
#include "arm64/sysreg.h"
#include "arch/el2_drop.h"

    .section .text, "ax"
/*
 * A second CPU started by arch_cpu_start (PSCI CPU_ON; context_id x0 = struct arch_secondary *). PSCI
 * starts it at the caller's exception level, EL1, but an implementation may choose EL2: it then drops
 * like the boot CPU. It shares the boot CPU's identity map and never touches kernel state.
 */
    .globl arch_secondary_entry
arch_secondary_entry:
    mov     x19, x0
    mrs     x20, CurrentEL
    lsr     x20, x20, #2
    cmp     x20, #2
    b.ne    secondary_el1
    drop_to_el1 secondary_el1
secondary_el1:
    ldr     x0, =SCTLR_EL1_RES1
    msr     sctlr_el1, x0
    adr     x0, secondary_vectors
    msr     vbar_el1, x0
    isb
    ldr     x0, [x19, #SEC_SP]
    mov     sp, x0
    bl      arch_mmu_enable_secondary
    ldr     x1, [x19, #SEC_ENTRY]
    ldr     x0, [x19, #SEC_ARG]
    blr     x1
4:  wfi                                 /* entry must not return; park if it does */
    b       4b

/* Any exception on a second CPU is a bug in its load: park that CPU, leave the rtos running. */
    .balign 2048
secondary_vectors:
    .rept   16
    .balign 128
5:  wfe
    b       5b
    .endr

