/*
 * The physical GICv3 as the hypervisor programs it (drivers/gicv3.c): distributor set-up, one SPI's
 * routing, and a trapping CPU's redistributor.
 */
#ifndef HYP_DRIVERS_GICV3_H
#define HYP_DRIVERS_GICV3_H

#include <stdint.h>

/* Affinity routing, Group 1 non-secure on; every SPI disabled and in Group 1. */
void gicv3_dist_init(void);
/* Routes SPI `intid` to the CPU with affinity `aff` at priority `prio` and enables it. */
void gicv3_spi_route(unsigned intid, uint64_t aff, uint8_t prio);
/* Wakes CPU `cpu`'s redistributor and puts every SGI/PPI in Group 1. */
void gicv3_redist_wake(unsigned cpu);
/* Sets a PPI's priority and enables it on CPU `cpu`'s redistributor. */
void gicv3_ppi_enable(unsigned cpu, unsigned intid, uint8_t prio);

#endif /* HYP_DRIVERS_GICV3_H */
