/*
 * The physical GIC as the hypervisor drives it, whichever version the board has: drivers/gic.c picks
 * the driver (drivers/gicv3.c, drivers/gicv2.c) once, from what the boot CPU reports
 * (ID_AA64PFR0_EL1.GIC), and every other module uses these calls only. Nothing outside drivers/ names a
 * GIC version; the partitions' view of the distributor (arch/arm64/vgicd.c) asks gic_version() which
 * register layout it emulates.
 *
 * Conventions, the same with either driver: INTIDs (SGIs 0-15, PPIs 16-31, SPIs from 32; no LPIs),
 * priority bytes (lower is more urgent), affinities packed as arch_mpidr_affinity returns them. A GICv2
 * names CPU interfaces instead of affinities; its driver takes interface n for the CPU with Aff0 n
 * (QEMU virt, the GIC-400 boards: one cluster of at most 8 CPUs) and gic_cpu_init checks it on every
 * CPU. A CPU's private interrupts (SGIs, PPIs) are reached through `cpu`: any CPU's redistributor on a
 * GICv3, but only the calling CPU's bank on a GICv2, so callers pass their own CPU (every caller does:
 * a CPU quiesces, wakes and configures itself).
 */
#ifndef HYP_DRIVERS_GIC_H
#define HYP_DRIVERS_GIC_H

#include <stdbool.h>
#include <stdint.h>

/* The INTID of an acknowledged interrupt (gic_ack): ten bits hold every INTID below the LPIs in both
 * versions; a GICv2 reports the sending CPU of an SGI above them, which gic_drop and gic_deactivate
 * need back. */
#define GIC_ACK_INTID(ack) ((unsigned)((ack)&0x3ffu))

/* Picks the driver (the boot CPU, first): returns the GIC version, 3 or 2. */
unsigned gic_probe(void);
unsigned gic_version(void);
/* The bytes the distributor's frame spans, as a partition's trapped view covers it. */
uint64_t gic_dist_size(void);

/* Distributor: every SPI disabled, in the group the hypervisor's and the guests' drivers use. */
void gic_dist_init(void);
/* Routes SPI `intid` to the CPU with affinity `aff` at priority `prio` and enables it. */
void gic_spi_route(unsigned intid, uint64_t aff, uint8_t prio);
/* Routes SPI `intid` to the CPU with affinity `aff`; its enable stays as it is. */
void gic_spi_place(unsigned intid, uint64_t aff);
/* Disables SPI `intid` and clears its pending and active state (a partition stops or restarts). */
void gic_spi_quiesce(unsigned intid);
void gic_spi_disable(unsigned intid);
/* Makes SPI `intid` pending. */
void gic_spi_set_pending(unsigned intid);
void gic_spi_set_priority(unsigned intid, uint8_t prio);

/* A CPU's private interrupts (header comment: `cpu` is the caller's on a GICv2). */
/* Sets a PPI's (or SGI's) priority and enables it. */
void gic_ppi_enable(unsigned cpu, unsigned intid, uint8_t prio);
/* Disables the SGIs/PPIs in `mask` (bit n = INTID n) and clears their pending and active state. */
void gic_ppi_quiesce(unsigned cpu, uint32_t mask);
void gic_ppi_disable(unsigned cpu, unsigned intid);
/* Makes SGIs/PPIs pending (an SGI as if this CPU had sent it to itself). */
void gic_private_set_pending(unsigned cpu, uint32_t mask);
void gic_private_enable(unsigned cpu, uint32_t mask);
void gic_private_set_priority(unsigned cpu, unsigned intid, uint8_t prio);
/* Whether PPI `intid` of CPU `cpu`, or SPI `intid`, is configured level-sensitive. */
bool gic_irq_is_level(unsigned cpu, unsigned intid);
/* Whether it is pending. For a level-sensitive interrupt that is not latched by a set-pending write,
 * that is its line's level, active or not. */
bool gic_irq_is_pending(unsigned cpu, unsigned intid);
/* The priority byte of SGI/PPI `intid` of CPU `cpu`, or of SPI `intid`. */
uint8_t gic_irq_priority(unsigned cpu, unsigned intid);
/* Sends SGI `sgi` to the CPU with affinity `aff`, after this CPU's earlier memory writes (they are
 * visible to the target when it takes the SGI). */
void gic_send_sgi(uint64_t aff, unsigned sgi);

/* This CPU's physical CPU interface. */
/* At start-up on each CPU: the distributor's view of this CPU (GICv3: its redistributor awake), the
 * CPU interface reachable. Panics when the board breaks a convention of the header comment. */
void gic_cpu_init(unsigned cpu);
/* The hypervisor's own settings: priority drop and deactivation split (EOImode 1), every priority
 * unmasked, no preemption grouping, the group enabled. */
void gic_hyp_cpuif(void);
/* Acknowledges the highest pending interrupt (GIC_ACK_INTID of the result: 1020 and above when none). */
uint32_t gic_ack(void);
/* Priority drop (EOImode 1) and deactivation of an acknowledged interrupt (the value gic_ack returned;
 * a PPI's or SPI's INTID alone does too). */
void gic_drop(uint32_t ack);
void gic_deactivate(uint32_t ack);
/* The highest pending interrupt's INTID, not acknowledged. */
unsigned gic_peek(void);

/* The physical CPU interface of a partition that takes its interrupts directly (the rtos), as it left
 * it; saved and restored around Linux's turns on a CPU they share. No interrupt is active then. */
struct gic_cpuif_state {
    uint64_t ctlr, pmr, bpr, grpen;
};
void gic_cpuif_save(struct gic_cpuif_state *s);
void gic_cpuif_restore(const struct gic_cpuif_state *s);
/* As after a reset: disabled, everything masked, no active priority. */
void gic_cpuif_reset(void);

/* The memory-mapped CPU interface a partition reaches without a trap, when the GIC has one (GICv2): at
 * *ipa in the partition (the board's GICC address), *size bytes, backed by the virtual CPU interface for
 * a partition whose interrupts trap (Linux) or by the physical one for a partition that takes them
 * directly (the rtos). False on a GICv3, whose CPU interface is system registers. */
bool gic_guest_cpuif(bool trapping, uint64_t *ipa, uint64_t *pa, uint64_t *size);

/* This CPU's virtual CPU interface (the guests' list registers). List register values are in GICv3's
 * ICH_LR<n>_EL2 layout (arm64/gicv3.h) whichever the hardware; the GICv2 driver converts (ten-bit
 * INTIDs, the top five priority bits, and its guests' interrupts in Group 0, which is the group
 * Linux's GICv2 driver enables). */
unsigned gic_lr_count(void);
uint64_t gic_lr_read(unsigned i);
void gic_lr_write(unsigned i, uint64_t val);
/* Bit n: list register n is empty (ELRSR), or its EOI maintenance is due (EISR). */
uint64_t gic_lr_empty(void);
uint64_t gic_lr_eoi_done(void);
/* The control and maintenance status, in ICH_HCR_EL2's and ICH_MISR_EL2's bits (ICH_HCR_EN, _UIE,
 * _TALL1; ICH_MISR_EOI). */
uint64_t gic_vif_hcr(void);
void gic_vif_set_hcr(uint64_t hcr);
uint64_t gic_vif_misr(void);
/* Whether the interface can trap the guest's acknowledge (ICH_HCR_EL2.TALL1): GICv3 only; a GICv2's
 * virtual CPU interface is memory the guest reaches without a trap. */
bool gic_vif_traps_ack(void);
/* Whether the guest would take an interrupt of priority `prio` at once: its group enabled, its priority
 * mask open to prio and nothing active (with one active, preemption depends on the binary point:
 * answered no). */
bool gic_vif_guest_takes(uint8_t prio);
/* Empty list registers, no active priority, the guest's interface state at reset, control enabled. */
void gic_vif_reset(void);

#endif /* HYP_DRIVERS_GIC_H */
