/*
 * rtos entry. Entered with the MMU off at EL2 (QEMU virt,virtualization=on; U-Boot on most boards) or at
 * EL1 (inside an rtmux partition, or QEMU without virtualization), x0 = physical address of the DTB.
 * At EL2 the rtos configures just enough of EL2 to run as a plain EL1 kernel and drops there, so the
 * same binary runs bare-metal and in a partition.
 */
#include "arm64/gicv3.h"
#include "arm64/image.h"
#include "arm64/sysreg.h"

    .section .text.head, "ax"
    .globl _head
_head:
    ARM64_IMAGE_HEADER boot_entry

    .section .text.boot, "ax"
boot_entry:
    mov     x19, x0                     /* DTB pointer, kept until k_boot */
    mrs     x20, CurrentEL
    lsr     x20, x20, #2                /* x20 = entry exception level */
    cmp     x20, #2
    b.ne    el1_entry

    /* ---- EL2 -> EL1 drop ---- */
    mov     x0, #HCR_EL2_RW             /* EL1 is AArch64; no traps, no stage 2 */
    msr     hcr_el2, x0
    mrs     x0, cnthctl_el2
    orr     x0, x0, #(CNTHCTL_EL1PCTEN | CNTHCTL_EL1PCEN)
    msr     cnthctl_el2, x0             /* EL1 may use the physical counter and timer */
    msr     cntvoff_el2, xzr            /* virtual time == physical time */
    mrs     x0, ICC_SRE_EL2
    orr     x0, x0, #ICC_SRE_SRE
    orr     x0, x0, #ICC_SRE_ENABLE
    msr     ICC_SRE_EL2, x0             /* EL1 may use the GIC system-register interface */
    isb
    mov     x0, #CPTR_EL2_RES1          /* no FP/SIMD traps */
    msr     cptr_el2, x0
    msr     hstr_el2, xzr
    mrs     x0, midr_el1
    msr     vpidr_el2, x0
    mrs     x0, mpidr_el1
    msr     vmpidr_el2, x0
    ldr     x0, =SCTLR_EL1_RES1         /* MMU and caches off until arch_mmu_init */
    msr     sctlr_el1, x0
    mov     x0, #SPSR_EL1H_MASKED
    msr     spsr_el2, x0
    adr     x0, el1_entry
    msr     elr_el2, x0
    eret

el1_entry:
    ldr     x0, =SCTLR_EL1_RES1
    msr     sctlr_el1, x0
    isb
    mov     x0, #CPACR_EL1_FPEN_NONE_TRAPPED
    msr     cpacr_el1, x0               /* threads use FP/SIMD; the kernel is built without it */
    adr     x0, arch_vectors
    msr     vbar_el1, x0
    isb
    ldr     x0, =boot_stack_top
    mov     sp, x0

    /* BSS is cleared before any C runs; 16-byte aligned by the linker script. */
    ldr     x0, =_bss_start
    ldr     x1, =_bss_end
1:  cmp     x0, x1
    b.hs    2f
    stp     xzr, xzr, [x0], #16
    b       1b
2:
    bl      arch_mmu_init
    mov     x0, x19
    mov     x1, x20
    bl      k_boot                      /* does not return */
3:  wfi
    b       3b

    .section .bss
    .balign 16
boot_stack:
    .space  8192                        /* boot and idle-thread stack; see k_boot */
    .globl boot_stack_top
boot_stack_top:
