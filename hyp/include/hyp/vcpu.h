/*
 * One physical CPU's hypervisor state. TPIDR_EL2 points at the CPU's struct vcpu; `guest` comes first
 * because vectors.S saves the guest's registers there.
 */
#ifndef HYP_VCPU_H
#define HYP_VCPU_H

#include <stdint.h>

#include "arch/vcpu_state.h"
#include "hyp/limits.h"

struct partition;

struct vcpu {
    struct guest_regs guest;
    struct partition *part; /* NULL: the CPU belongs to no partition (parked) */
    unsigned cpu;
    uint64_t mpidr; /* affinity (Aff3:Aff2:Aff1:Aff0) */
    struct vgic_cpu vgic;
};

_Static_assert(__builtin_offsetof(struct vcpu, guest) == 0, "vectors.S saves guest registers at TPIDR_EL2");

extern struct vcpu hyp_vcpu[HYP_MAX_CPUS];
/* Each CPU's EL2 stack (start.S sets SP to the top of its own; every guest entry resets it there). */
extern uint8_t hyp_stacks[HYP_MAX_CPUS][HYP_STACK_SIZE];

#endif /* HYP_VCPU_H */
