/*
 * Hypervisor entry at EL2, MMU off, x0 = DTB. The boot CPU clears BSS and builds the EL2 page tables;
 * CPUs started later through PSCI CPU_ON enter at arch_secondary_start with their index in x0.
 */
#include "arm64/image.h"
#include "asm-offsets.h"

    .section .text.head, "ax"
    .globl _head
_head:
    ARM64_IMAGE_HEADER boot_entry

    .section .text.boot, "ax"
boot_entry:
    mov     x19, x0
    mrs     x0, CurrentEL
    cmp     x0, #(2 << 2)
    b.ne    not_el2
    ldr     x0, =_bss_start
    ldr     x1, =_bss_end
1:  cmp     x0, x1
    b.hs    2f
    stp     xzr, xzr, [x0], #16
    b       1b
2:  mov     x20, #0                     /* CPU index 0 */
    bl      cpu_common
    bl      mmu_el2_init
    bl      mmu_el2_enable
    mov     x0, #0
    mov     x1, x19
    adr     x2, arch_secondary_start    /* where CPUs started by PSCI CPU_ON begin */
    bl      hyp_main
    b       park

arch_secondary_start:
    mov     x20, x0                     /* CPU index, from the CPU_ON context */
    bl      cpu_common
    bl      mmu_el2_enable
    mov     x0, x20
    bl      hyp_secondary
    b       park

/* Stack, vectors, TPIDR_EL2 = &hyp_vcpu[x20]. Clobbers x0-x2. */
cpu_common:
    ldr     x0, =hyp_stacks
    mov     x1, #HYP_STACK_BYTES
    madd    x0, x1, x20, x0
    add     sp, x0, x1
    ldr     x0, =hyp_vcpu
    mov     x1, #VCPU_SIZE
    madd    x0, x1, x20, x0
    msr     tpidr_el2, x0
    adr     x0, hyp_vectors
    msr     vbar_el2, x0
    isb
    ret

not_el2:
    /* Not entered at EL2: nothing to isolate with. Without a console yet, all we can do is stop. */
park:
    wfi
    b       park
