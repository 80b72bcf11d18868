/*
 * Interrupts. Handlers run with interrupts masked (no nesting): the GIC still delivers the most urgent
 * pending interrupt first, and a handler that wakes a more urgent thread gets it switched in as soon as
 * the handler returns.
 *
 * FP/SIMD: handlers may use it (double arithmetic, and the SIMD registers GCC uses for copies in any
 * application code). The interrupted thread's v0-v31, FPCR and FPSR are the same when it runs again,
 * whatever its handlers did. How: interrupt entry saves general registers only and makes FP/SIMD trap;
 * the first FP/SIMD instruction of any handler in that entry traps, which saves the thread's FP/SIMD
 * state (once per entry), then the handlers go on with FP/SIMD enabled and FPCR 0 (round to nearest,
 * no exception traps, no flush to zero; the thread's FPCR is not theirs), and the state is loaded back
 * after the last handler, before any thread runs. FPSR's flags start as the thread's and what handlers
 * add to them is dropped. Cost, in QEMU icount (1 instruction = 1 ns): 7 instructions on every
 * interrupt; about 56 more on an interrupt whose handlers use FP/SIMD. The kernel itself never uses
 * FP/SIMD.
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

/* The least urgent attach priority: GIC priorities 0xe0..0xff (attach priorities below 32) are never
 * signalled to the rtos (its priority mask, lib/prio.h), so that on a CPU it shares with Linux the
 * hypervisor's and Linux's interrupts wait while the rtos runs. */
#define RT_IRQ_PRIO_MIN 32u

/*
 * Attaches a handler; prio RT_IRQ_PRIO_MIN..255, higher = more urgent (255 - prio is the GIC's priority
 * byte); RT_EINVAL for a priority below RT_IRQ_PRIO_MIN.
 * The interrupt stays disabled until rt_irq_enable(). RT_EBUSY if a handler is attached already.
 */
int rt_irq_attach(unsigned intid, unsigned prio, unsigned trigger, rt_irq_handler_t handler, void *arg);
int rt_irq_detach(unsigned intid);
int rt_irq_enable(unsigned intid);
int rt_irq_disable(unsigned intid);

/* Sends software-generated interrupt `sgi` (0-15) to the calling CPU. */
int rt_irq_raise_sgi(unsigned sgi);

/* True inside an interrupt handler. */
bool rt_in_irq(void);

/* Number of interrupts taken since boot. */
uint64_t rt_irq_count(void);

#endif /* RTOS_IRQ_H */
