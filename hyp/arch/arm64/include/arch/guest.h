/*
 * Running a partition on this CPU (arch/arm64/guest.c): the EL2 controls for its kind, then the jump.
 */
#ifndef HYP_ARCH_GUEST_H
#define HYP_ARCH_GUEST_H

#include <stdbool.h>
#include <stdint.h>

struct partition;
struct vcpu;

/* Enters v's partition on this CPU at `entry` with x0 = x0 (its DTB at a start, CPU_ON's context id),
 * EL1h, MMU off, interrupts masked, EL1 state reset. */
void arch_guest_start(struct vcpu *v, uint64_t entry, uint64_t x0) __attribute__((noreturn));
/* Parks this CPU for good. keep_irqs: it still serves the hypervisor's own interrupts (the console);
 * otherwise nothing of the partition's can reach it any more. */
void arch_guest_park(bool keep_irqs) __attribute__((noreturn));
/* No guest on this CPU for now: its physical interrupts are taken at EL2 once the caller unmasks them
 * (a CPU that waits in the hypervisor for CPU_ON, or that carries the console). */
void arch_guest_wait_setup(void);

/* Stops everything v's partition left running on this CPU (on this CPU): its EL1 timers, its virtual
 * interrupt state, its SGIs and PPIs (disabled, not pending, not active). */
void arch_vcpu_quiesce(struct vcpu *v);
/* Stops what belongs to p as a whole (its CPUs are all off): its SPIs (disabled, not pending, not
 * active) and its virtual distributor state. */
void arch_part_quiesce(struct partition *p);
/* Routes p's SPIs to its boot CPU, disabled, before it starts (the reset routing is CPU 0). */
void arch_part_irqs_init(const struct partition *p);

#endif /* HYP_ARCH_GUEST_H */
