/*
 * Starting, stopping and restarting a partition and its CPUs (core/lifecycle.c): what PSCI CPU_ON,
 * CPU_OFF, SYSTEM_OFF/RESET and fatal guest traps do. The other partitions keep running; the machine
 * powers off when none is left.
 */
#ifndef HYP_LIFECYCLE_H
#define HYP_LIFECYCLE_H

#include <stdint.h>

#include "hyp/vcpu.h"

struct partition;

/* This CPU's first entry (at boot): its partition's boot CPU enters it at its entry point; another CPU
 * waits in the hypervisor until the partition starts it with CPU_ON. */
void part_enter(struct vcpu *v) __attribute__((noreturn));
/* Stops v's partition (all its CPUs) with a logged reason; this CPU stays parked. */
void part_stop(struct vcpu *v, const char *why) __attribute__((noreturn));
/* Restarts v's partition from its pristine images (PSCI SYSTEM_RESET): all its CPUs stop, then its boot
 * CPU alone starts. */
void part_reset(struct vcpu *v) __attribute__((noreturn));

/* What CPU_ON of a CPU of the caller's own partition did. */
enum part_cpu_on {
    CPU_ON_STARTED, /* it was off: it starts at the entry point with x0 = the context id */
    CPU_ON_ALREADY, /* it is on */
    CPU_ON_PENDING, /* an earlier CPU_ON has not made it start yet */
    CPU_ON_REFUSED, /* the partition is stopping or restarting */
};
/* Starts CPU `cpu` of v's partition (the caller checked it is one, and that entry lies in its RAM). */
enum part_cpu_on part_cpu_on(struct vcpu *v, unsigned cpu, uint64_t entry, uint64_t ctx);
/* The power state of p's CPU `cpu` (AFFINITY_INFO). */
enum vcpu_power part_cpu_power(const struct partition *p, unsigned cpu);
/* PSCI CPU_OFF on v's CPU: it turns off and waits for CPU_ON; the partition's last CPU on stops it. */
void part_cpu_off(struct vcpu *v) __attribute__((noreturn));
/* Serves what other CPUs asked of v's (a stop), on its way back to its guest. */
void part_cpu_poll(struct vcpu *v);

/* Shared-core mode (lifecycle.c's header comment). The rtos r of a shared CPU executed WFI (trapped):
 * the CPU goes to Linux, or waits for work in the hypervisor. */
void part_rtos_idle(struct vcpu *r) __attribute__((noreturn));
/* An interrupt of the rtos arrived while Linux's lx ran on their shared CPU (t0: the counter at the
 * trap): the rtos gets the CPU back. */
void part_rtos_preempt(struct vcpu *lx, uint64_t t0) __attribute__((noreturn));

/* The longest fault description part_fault keeps (longer ones are cut in the log). */
#define HYP_FAULT_TEXT_MAX 128u

/* A fault of v's partition (a Linux panic, an rtos fatal error, an SError, an unexpected trap): logged
 * with `what`, then the partition's fault policy stops it, or restarts it from its pristine images
 * while its restart rate allows (and stops it once it does not). */
void part_fault(struct vcpu *v, const char *what) __attribute__((noreturn));

#endif /* HYP_LIFECYCLE_H */
