/*
 * Interrupts, nested by priority. A handler runs with interrupts unmasked: an interrupt attached at a
 * higher priority preempts it (the GIC's running priority), one at the same or a lower priority waits
 * until it returns, and the most urgent pending interrupt is always taken first. Thread switches wait for
 * the outermost handler's end: a thread a handler makes ready runs once every handler has returned,
 * chosen once. Handlers run on the kernel's interrupt stack (8 KiB), not on the interrupted thread's.
 * A handler that shares data with a less urgent handler or a thread guards it with rt_irq_lock, as a
 * thread would.
 *
 * The kernel's own interrupts: its timer at RT_IRQ_PRIO_TIMER (boot argument irq_prio_timer=N), so a
 * periodic thread's release preempts every other handler, and the V-Bus doorbell at RT_IRQ_PRIO_VBUS
 * (irq_prio_vbus=N). An interrupt that must preempt the timer's handler is attached above it with the
 * timer moved down (docs/configuration.md: a system's rtos boot arguments).
 *
 * FP/SIMD: handlers may use it (double arithmetic, and the SIMD registers GCC uses for copies in any
 * application code). The interrupted thread's (or handler's) v0-v31, FPCR and FPSR are the same when it
 * runs again, whatever its handlers did. How: each nesting level's entry saves general registers only
 * and makes FP/SIMD trap; the first FP/SIMD instruction of a handler in that level traps, which saves
 * the registers as the level found them (once per level), then the handlers go on with FP/SIMD enabled
 * and FPCR 0 (round to nearest, no exception traps, no flush to zero; the thread's FPCR is not theirs),
 * and the state is loaded back after the level's last handler. FPSR's flags start as the interrupted
 * code's and what handlers add to them is dropped. Cost, in QEMU icount (1 instruction = 1 ns): a few
 * instructions on every interrupt; about 56 more on a level whose handlers use FP/SIMD. The kernel
 * itself never uses FP/SIMD.
 */
#ifndef RTOS_IRQ_H
#define RTOS_IRQ_H

#include <stdbool.h>
#include <stdint.h>

typedef void (*rt_irq_handler_t)(unsigned intid, void *arg);

/* GIC interrupt IDs: SGIs 0-15, PPIs 16-31, SPIs 32-1019. */
#define RT_IRQ_SGI(n) (n)
#define RT_IRQ_PPI(n) (16u + (n))
#define RT_IRQ_SPI(n) (32u + (n))
#define RT_IRQ_MAX    1020u

/* Trigger type for SPIs and PPIs (SGIs are always edge). */
#define RT_IRQ_LEVEL 0u
#define RT_IRQ_EDGE  1u

/* The kernel's default priorities for its timer and the V-Bus doorbell (see above). */
#define RT_IRQ_PRIO_TIMER 255u
#define RT_IRQ_PRIO_VBUS  64u

/* At most this many distinct attach priorities at a time: each is one nesting level, with its own
 * FP/SIMD save area and share of the interrupt stack. */
#define RT_IRQ_LEVELS 8u

/* The least urgent attach priority: GIC priorities 0xe0..0xff (attach priorities below 32) are never
 * signalled to the rtos (its priority mask, lib/prio.h), so that on a CPU it shares with Linux the
 * hypervisor's and Linux's interrupts wait while the rtos runs. */
#define RT_IRQ_PRIO_MIN 32u

/*
 * Attaches a handler; prio RT_IRQ_PRIO_MIN..255, higher = more urgent (255 - prio is the GIC's priority
 * byte); RT_EINVAL for a priority below RT_IRQ_PRIO_MIN.
 * The interrupt stays disabled until rt_irq_enable(). RT_EBUSY if a handler is attached already,
 * RT_EOVERFLOW if prio would be the (RT_IRQ_LEVELS + 1)th distinct priority attached.
 */
int rt_irq_attach(unsigned intid, unsigned prio, unsigned trigger, rt_irq_handler_t handler, void *arg);
int rt_irq_detach(unsigned intid);
/* The attach priority of intid, or RT_EINVAL if nothing is attached to it. */
int rt_irq_priority(unsigned intid);
int rt_irq_enable(unsigned intid);
int rt_irq_disable(unsigned intid);

/* Masks every interrupt of the rtos and returns what rt_irq_unlock needs to restore the previous state:
 * nests; keep it short (it delays the timer). For data a thread or a less urgent handler shares with a
 * handler. */
uint64_t rt_irq_lock(void);
void rt_irq_unlock(uint64_t key);

/* Sends software-generated interrupt `sgi` (0-15) to the calling CPU. */
int rt_irq_raise_sgi(unsigned sgi);

/* True inside an interrupt handler. */
bool rt_in_irq(void);

/* Number of interrupts taken since boot. */
uint64_t rt_irq_count(void);

#endif /* RTOS_IRQ_H */
