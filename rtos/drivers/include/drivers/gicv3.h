/*
 * GICv3 driver: distributor, this CPU's redistributor and the system-register CPU interface.
 */
#ifndef DRIVERS_GICV3_H
#define DRIVERS_GICV3_H

#include <stdbool.h>
#include <stdint.h>

#include "arm64/gicv3.h"

/* Returns 0, or -1 if no redistributor matches this CPU. */
int gic_init(void);
void gic_set_priority(unsigned intid, uint8_t gic_prio);
void gic_set_trigger(unsigned intid, bool edge);
void gic_enable(unsigned intid);
void gic_disable(unsigned intid);
void gic_send_sgi_self(unsigned sgi);
/* Sends SGI `sgi` to the CPU with affinity `aff` (packed: Aff3 in bits 31:24, as arch_mpidr_affinity),
 * after this CPU's earlier memory writes. */
void gic_send_sgi(uint64_t aff, unsigned sgi);
/* Acknowledge: returns the INTID (>= GIC_INTID_SPECIAL when nothing is pending). */
unsigned gic_ack(void);
void gic_eoi(unsigned intid);

#endif /* DRIVERS_GICV3_H */
