/*
 * The interrupt controller, whichever the board has (drivers/intc.c picks the driver at intc_init:
 * gicv3.c or gicv2.c). The kernel and the other drivers use this interface only; nothing outside the
 * GIC drivers names a GIC version. The rtos takes Group 1 interrupts on GICv3 and Group 0 ones on
 * GICv2 (a GIC without the Security Extensions signals both as IRQ), routed to its own CPU, and
 * programs the distributor only for what it attaches, so inside an rtmux partition it touches nothing
 * of Linux's.
 */
#ifndef DRIVERS_INTC_H
#define DRIVERS_INTC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arm64/gicv2.h"
#include "arm64/sysreg.h"

/* INTIDs from here are special (1023: nothing pending), in both GIC versions. */
#define INTC_INTID_SPECIAL 1020u
/* The INTID of an acknowledged interrupt: the rtos uses no LPI, so every INTID it takes fits in the ten
 * bits both versions report (GICv2 adds the sending CPU of an SGI above them). */
#define INTC_ACK_INTID(ack) ((unsigned)((ack)&0x3ffu))

/* Picks the driver for this CPU's interrupt controller and sets up the distributor's share and this
 * CPU's interface. Returns NULL, or why it cannot (for the panic message). */
const char *intc_init(void);
void intc_set_priority(unsigned intid, uint8_t prio);
void intc_set_trigger(unsigned intid, bool edge);
void intc_enable(unsigned intid);
void intc_disable(unsigned intid);
void intc_send_sgi_self(unsigned sgi);
/* Sends SGI `sgi` to the CPU with affinity `aff` (packed: Aff3 in bits 31:24, as arch_mpidr_affinity),
 * after this CPU's earlier memory writes. */
void intc_send_sgi(uint64_t aff, unsigned sgi);
/* The CPU interface of a GICv2 (its GICC), or NULL on a GICv3, whose CPU interface is system registers;
 * set by intc_init. */
extern volatile uint32_t *intc_gicc;

/* Acknowledges the highest pending interrupt: INTC_ACK_INTID of the result is its INTID (>=
 * INTC_INTID_SPECIAL when nothing is pending); intc_eoi takes the same value back. gicc: intc_gicc, read
 * once by the caller for a run of both. Inline, on intc_gicc:
 * they are every interrupt's path, where the calls through the driver's table cost the timer's
 * latency one counter tick, 16 ns, on QEMU icount (bare idle 0.432 us through the table, 0.416 us inline,
 * 2026-11-27). */
static inline uint32_t intc_ack(volatile uint32_t *gicc)
{
    if (gicc == NULL) {
        return (uint32_t)(ARCH_READ_SYSREG(ICC_IAR1_EL1) & GIC_INTID_MASK);
    }
    return gicc[GICC_IAR / 4u];
}

static inline void intc_eoi(volatile uint32_t *gicc, uint32_t ack)
{
    if (gicc == NULL) {
        ARCH_WRITE_SYSREG(ICC_EOIR1_EL1, (uint64_t)ack);
    } else {
        gicc[GICC_EOIR / 4u] = ack; /* with an SGI's source CPU, as GICv2 requires */
    }
}
/* On a CPU that never runs the kernel (cpuload's second CPU): turns its CPU interface on and enables one
 * of its PPIs at priority `prio`, so that the PPI wakes it from WFI. */
void intc_cpu_ppi_init(unsigned intid, uint8_t prio);

#endif /* DRIVERS_INTC_H */
