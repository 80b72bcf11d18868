/*
 * GIC priorities between the rtos, the hypervisor and Linux: the contract that lets the rtos share its
 * CPU with Linux (shared-core mode, docs/architecture.md) while still taking its interrupts directly.
 *
 * All interrupts are Group 1 non-secure (Group 0 belongs to the secure firmware on boards with EL3), so
 * the two worlds are told apart by priority alone. The rtos keeps its physical priority mask at
 * RTMUX_PRIO_RTOS_PMR: interrupts of priority RTMUX_PRIO_RTOS_PMR or lower (numerically greater or
 * equal) are never signalled to it, bare metal or in a partition. On a CPU it shares, the hypervisor
 * puts its own interrupts and Linux's physical ones in that band, so while the rtos runs they stay
 * pending (never taken by the rtos, never lost); while Linux runs the mask is the hypervisor's (open),
 * every physical interrupt traps to EL2, and one of the rtos's (above the band) makes the hypervisor
 * hand the CPU back to the rtos at once. The rtos therefore maps its attach priorities below the band
 * (rt_irq_attach refuses those that would land in it).
 *
 * An interrupt is signalled only when its priority is numerically below the mask, and the mask's
 * highest value reads back as the lowest implemented priority (0xf8 with 5 priority bits, QEMU's and
 * the Cortex-A cores'; the architecture's minimum for a CPU interface with two security states), so the
 * band stops short of it: the hypervisor's open mask (0xff) must still let both band priorities through.
 * Under EL3 firmware, non-secure writes are shifted into the lower half of the range by the GIC (v
 * becomes 0x80 | v >> 1, masks and priorities alike): 0xe0 and 0xe8 become 0xf0 and 0xf4, which a
 * 5-bit GIC holds as 0xf0 both, still below the open mask (0xf8) and at or below the rtos's (0xf0), so
 * the band holds there too; the hypervisor and Linux then share one priority, which costs nothing (both
 * are taken at EL2 only, while Linux runs).
 */
#ifndef LIB_PRIO_H
#define LIB_PRIO_H

#define RTMUX_PRIO_RTOS_PMR 0xe0u /* the rtos's ICC_PMR_EL1: only priorities < 0xe0 reach it */
#define RTMUX_PRIO_HYP      0xe0u /* the hypervisor's own interrupts on a CPU shared with the rtos */
#define RTMUX_PRIO_LINUX    0xe8u /* Linux's physical interrupts on a CPU it shares with the rtos */

_Static_assert(RTMUX_PRIO_HYP >= RTMUX_PRIO_RTOS_PMR && RTMUX_PRIO_LINUX >= RTMUX_PRIO_RTOS_PMR,
               "the hypervisor's and Linux's interrupts lie in the band the rtos masks");
_Static_assert(
    RTMUX_PRIO_HYP < 0xf8u && RTMUX_PRIO_LINUX < 0xf8u,
    "a 5-bit GIC's open mask reads 0xf8: the band must lie below it to reach EL2 while Linux runs");

#endif /* LIB_PRIO_H */
