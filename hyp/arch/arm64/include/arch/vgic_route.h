/*
 * Who a partition's interrupts may reach (arch/arm64/vgic_route.c, pure: no register access): the
 * targets of its SGIs and the CPU its SPI routing names, always among its own CPUs.
 */
#ifndef HYP_ARCH_VGIC_ROUTE_H
#define HYP_ARCH_VGIC_ROUTE_H

#include <stdint.h>

struct partition;

/* The CPUs (bit n = CPU n) that a write of `sgi1r` to ICC_SGI1R_EL1 by p's CPU `self` sends its SGI
 * to: with IRM, every CPU of p but self; otherwise the CPUs of p whose affinity the value names (Aff3,
 * Aff2, Aff1, RS and TargetList). A target outside p (another partition's CPU, or none) is dropped. */
uint64_t vgic_sgi_targets(const struct partition *p, unsigned self, uint64_t sgi1r);

/* The CPU of p that a guest's GICD_IROUTER value routes an SPI to: the CPU its affinity names when p
 * has it; otherwise (1-of-N routing, IRM, which could pick any CPU of the board, or a CPU p does not
 * have) p's boot CPU. */
unsigned vgic_irouter_cpu(const struct partition *p, uint64_t irouter);

/* The GICD_IROUTER value (MPIDR layout: Aff3 at [39:32], IRM 0) naming CPU `cpu`. */
uint64_t vgic_irouter_of(unsigned cpu);

/* GICv2: CPU interface n is the CPU with Aff0 n (drivers/gic.h). */

/* The CPUs of p that a write of `sgir` to GICD_SGIR by p's CPU `self` sends its SGI to: the CPU
 * interfaces its target list names (filter 0), every CPU of p but self (1), self (2), none (3). */
uint64_t vgic_sgir_targets(const struct partition *p, unsigned self, uint32_t sgir);

/* The CPU of p that a guest's GICD_ITARGETSR byte routes an SPI to: the first CPU of p it names;
 * otherwise (none of p's) p's boot CPU. Several named: the first, as only one CPU takes it anyway. */
unsigned vgic_itargets_cpu(const struct partition *p, uint8_t targets);

/* The GICD_ITARGETSR byte naming CPU `cpu`. */
uint8_t vgic_itargets_of(unsigned cpu);

#endif /* HYP_ARCH_VGIC_ROUTE_H */
