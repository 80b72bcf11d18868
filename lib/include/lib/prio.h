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
 * The values assume at least 5 implemented priority bits (the architecture's minimum for a CPU
 * interface with two security states is 5; QEMU and Cortex-A cores implement 5): 0xf0 and 0xf8 are the
 * two lowest priorities such a GIC can tell apart. Under EL3 firmware, non-secure writes are shifted
 * into the lower half of the priority range by the GIC, on the mask as on the priorities, so the
 * order and the band hold there too.
 */
#ifndef LIB_PRIO_H
#define LIB_PRIO_H

#define RTMUX_PRIO_RTOS_PMR 0xf0u /* the rtos's ICC_PMR_EL1: only priorities < 0xf0 reach it */
#define RTMUX_PRIO_HYP      0xf0u /* the hypervisor's own interrupts on a CPU shared with the rtos */
#define RTMUX_PRIO_LINUX    0xf8u /* Linux's physical interrupts on a CPU it shares with the rtos */

_Static_assert(RTMUX_PRIO_HYP >= RTMUX_PRIO_RTOS_PMR && RTMUX_PRIO_LINUX >= RTMUX_PRIO_RTOS_PMR,
               "the hypervisor's and Linux's interrupts lie in the band the rtos masks");

#endif /* LIB_PRIO_H */
