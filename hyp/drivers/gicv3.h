/*
 * The physical GICv3 as the hypervisor programs it (drivers/gicv3.c): distributor set-up, one SPI's
 * routing and quiescing, and a trapping CPU's redistributor.
 */
#ifndef HYP_DRIVERS_GICV3_H
#define HYP_DRIVERS_GICV3_H

#include <stdbool.h>
#include <stdint.h>

/* Affinity routing, Group 1 non-secure on; every SPI disabled and in Group 1. */
void gicv3_dist_init(void);
/* Routes SPI `intid` to the CPU with affinity `aff` at priority `prio` and enables it. */
void gicv3_spi_route(unsigned intid, uint64_t aff, uint8_t prio);
/* Wakes CPU `cpu`'s redistributor and puts every SGI/PPI in Group 1. */
void gicv3_redist_wake(unsigned cpu);
/* Sets a PPI's priority and enables it on CPU `cpu`'s redistributor. */
void gicv3_ppi_enable(unsigned cpu, unsigned intid, uint8_t prio);
/* Disables SPI `intid` and clears its pending and active state (a partition stops or restarts). */
void gicv3_spi_quiesce(unsigned intid);
/* Routes SPI `intid` to the CPU with affinity `aff`; its enable stays as it is. */
void gicv3_spi_place(unsigned intid, uint64_t aff);
/* Disables the SGIs/PPIs in `mask` on CPU `cpu` and clears their pending and active state. */
void gicv3_ppi_quiesce(unsigned cpu, uint32_t mask);
/* Disables one PPI on CPU `cpu`, or one SPI. */
void gicv3_ppi_disable(unsigned cpu, unsigned intid);
void gicv3_spi_disable(unsigned intid);
/* Whether PPI `intid` of CPU `cpu`, or SPI `intid`, is configured level-sensitive. */
bool gicv3_irq_is_level(unsigned cpu, unsigned intid);
/* Whether it is pending. For a level-sensitive interrupt that is not latched by a write to ISPENDR,
 * that is its line's level, active or not (GICv3: an active level interrupt whose line is still
 * asserted is active and pending). */
bool gicv3_irq_is_pending(unsigned cpu, unsigned intid);
/* The priority byte of SGI/PPI `intid` of CPU `cpu` (its redistributor), or of SPI `intid`. */
uint8_t gicv3_irq_priority(unsigned cpu, unsigned intid);
/* Makes SPI `intid` pending (GICD_ISPENDR). */
void gicv3_spi_set_pending(unsigned intid);
/* Sets an SPI's priority byte. */
void gicv3_spi_set_priority(unsigned intid, uint8_t prio);
/* Makes SGIs/PPIs pending (bit n = INTID n) in CPU cpu's redistributor. */
void gicv3_private_set_pending(unsigned cpu, uint32_t mask);
/* SGIs/PPIs of cpu: enables (bit n = INTID n), and one's priority. */
void gicv3_private_enable(unsigned cpu, uint32_t mask);
void gicv3_private_set_priority(unsigned cpu, unsigned intid, uint8_t prio);
/* Sends Group 1 SGI `sgi` to the CPU with affinity `aff` (packed as arch_mpidr_affinity returns it),
 * after this CPU's earlier memory writes (they are visible to the target when it takes the SGI). */
void gicv3_send_sgi(uint64_t aff, unsigned sgi);

#endif /* HYP_DRIVERS_GICV3_H */
