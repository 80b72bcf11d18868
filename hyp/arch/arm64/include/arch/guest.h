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
/* Shared-core mode: saves the EL1 state of v's world (the running one) into v->saved; enters v's world
 * again from there (EL2 controls, EL1 state, and v->guest's registers). */
void arch_world_save(struct vcpu *v);
/* stamp (if not NULL) receives the counter once the state is loaded, just before the general registers
 * and the return: the end of a switch, for its cost (hyp/share.h). */
void arch_world_enter(struct vcpu *v, uint64_t *stamp) __attribute__((noreturn));
/* The physical CPU interface as the hypervisor uses it on a CPU whose interrupts trap (EOImode 1, mask
 * open, Group 1 on): where the rtos of a shared CPU had its own values. */
void arch_hyp_cpuif(void);
/* The virtual CPU this CPU runs or last ran (TPIDR_EL2); on a shared CPU either world's (same cpu). */
struct vcpu *arch_this_vcpu(void);
/* Parks this CPU for good. keep_irqs: it still serves the hypervisor's own interrupts (the console);
 * otherwise nothing of the partition's can reach it any more. */
void arch_guest_park(bool keep_irqs) __attribute__((noreturn));
/* No guest on this CPU for now: its physical interrupts are taken at EL2 once the caller unmasks them
 * (a CPU that waits in the hypervisor for CPU_ON, or that carries the console); v (if not NULL) is the
 * virtual CPU whose interrupts they are (hyp_el2_irq's). */
void arch_guest_wait_setup(struct vcpu *v);

/* Stops everything v's partition left running on this CPU (on this CPU): its EL1 timers, its virtual
 * interrupt state, its SGIs and PPIs (disabled, not pending, not active). */
void arch_vcpu_quiesce(struct vcpu *v);
/* Stops what belongs to p as a whole (its CPUs are all off): its SPIs (disabled, not pending, not
 * active) and its virtual distributor state. */
void arch_part_quiesce(struct partition *p);
/* Routes p's SPIs to its boot CPU, disabled, before it starts (the reset routing is CPU 0); a Linux
 * partition sharing a CPU with the rtos gets them below the rtos's priority mask. */
void arch_part_irqs_init(struct partition *p);

#endif /* HYP_ARCH_GUEST_H */
