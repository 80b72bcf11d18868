/*
 * Running a partition on this CPU (arch/arm64/guest.c): the EL2 controls for its kind, then the jump.
 */
#ifndef HYP_ARCH_GUEST_H
#define HYP_ARCH_GUEST_H

#include <stdbool.h>

struct partition;
struct vcpu;

/* Enters v's partition at its entry point with x0 = its DTB, EL1h, MMU off, interrupts masked. */
void arch_guest_start(struct vcpu *v) __attribute__((noreturn));
/* Parks this CPU for good. keep_irqs: it still serves the hypervisor's own interrupts (the console);
 * otherwise nothing of the partition's can reach it any more. */
void arch_guest_park(bool keep_irqs) __attribute__((noreturn));

/* Stops everything v's partition left running on this CPU: its EL1 timers, its interrupts (virtual
 * state, and the physical SGIs/PPIs and owned SPIs: disabled, not pending, not active). */
void arch_guest_quiesce(struct vcpu *v);
/* Routes p's SPIs to its first CPU, disabled, before it first runs (the reset routing is CPU 0). */
void arch_part_irqs_init(const struct partition *p);

#endif /* HYP_ARCH_GUEST_H */
