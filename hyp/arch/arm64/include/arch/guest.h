/*
 * Running a partition on this CPU (arch/arm64/guest.c): the EL2 controls for its kind, then the jump.
 */
#ifndef HYP_ARCH_GUEST_H
#define HYP_ARCH_GUEST_H

#include <stdbool.h>

struct vcpu;

/* Enters v's partition at its entry point with x0 = its DTB, EL1h, MMU off, interrupts masked. */
void arch_guest_start(struct vcpu *v) __attribute__((noreturn));
/* Parks this CPU for good. keep_irqs: it still serves the hypervisor's own interrupts (the console);
 * otherwise nothing of the partition's can reach it any more. */
void arch_guest_park(bool keep_irqs) __attribute__((noreturn));

#endif /* HYP_ARCH_GUEST_H */
