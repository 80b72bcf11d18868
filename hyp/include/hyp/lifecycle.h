/*
 * Stopping and restarting a partition (core/lifecycle.c): what PSCI SYSTEM_OFF/RESET and fatal guest
 * traps do. The other partitions keep running; the machine powers off when none is left.
 */
#ifndef HYP_LIFECYCLE_H
#define HYP_LIFECYCLE_H

struct vcpu;

/* Enters v's partition at its entry point (first start or after a reset). */
void part_enter(struct vcpu *v) __attribute__((noreturn));
/* Stops v's partition with a logged reason; this CPU stays parked. */
void part_stop(struct vcpu *v, const char *why) __attribute__((noreturn));
/* Restarts v's partition on this CPU from its pristine images (PSCI SYSTEM_RESET). */
void part_reset(struct vcpu *v) __attribute__((noreturn));

/* The longest fault description part_fault keeps (longer ones are cut in the log). */
#define HYP_FAULT_TEXT_MAX 128u

/* A fault of v's partition (a Linux panic, an rtos fatal error, an SError, an unexpected trap): logged
 * with `what`, then the partition's fault policy stops it, or restarts it from its pristine images
 * while its restart rate allows (and stops it once it does not). */
void part_fault(struct vcpu *v, const char *what) __attribute__((noreturn));

#endif /* HYP_LIFECYCLE_H */
