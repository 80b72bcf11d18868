/*
 * Interrupts. Handlers run with interrupts masked (no nesting): the GIC still delivers the most urgent
 * pending interrupt first, and a handler that wakes a more urgent thread gets it switched in as soon as
 * the handler returns.
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
