/*
 * rtos entry. Entered with the MMU off at EL2 (QEMU virt,virtualization=on; U-Boot on most boards) or at
 * EL1 (inside an rtmux partition, or QEMU without virtualization), x0 = physical address of the DTB.
 * At EL2 the rtos configures just enough of EL2 to run as a plain EL1 kernel and drops there, so the
 * same binary runs bare-metal and in a partition.
 */
#include "asm-offsets.h"
#include "arm64/gicv3.h"
#include "arm64/image.h"
#include "arm64/sysreg.h"
#include "arch/el2_drop.h"


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
    drop_to_el1 el1_entry

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
