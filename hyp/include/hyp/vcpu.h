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

/* Why a CPU entered EL2: from its partition (a trap by exception class, an interrupt, an SError), or an
 * interrupt taken while already at EL2 (a parked CPU). The rtos's CPU should see none after its
 * initialisation (the design's "no hypervisor on the hot path"), so every entry is counted. */
enum hyp_entry {
    ENTRY_DABT,   /* data abort: an emulated device (MMIO) or a refused access */
    ENTRY_IABT,   /* instruction fetch outside the partition */
    ENTRY_HVC,    /* PSCI through HVC */
    ENTRY_SMC,    /* PSCI through SMC (trapped) */
    ENTRY_SYSREG, /* trapped system register: GIC SGIs, PMU/debug, set/way, ... */
    ENTRY_OTHER,  /* any other synchronous exception */
    ENTRY_IRQ,    /* a physical interrupt taken from the partition (IRQ or FIQ) */
    ENTRY_SERROR,
    ENTRY_EL2_IRQ, /* a physical interrupt taken at EL2 (the CPU was in the hypervisor) */
    HYP_ENTRY_KINDS
};

struct vcpu {
    struct guest_regs guest;
    struct partition *part; /* NULL: the CPU belongs to no partition (parked) */
    unsigned cpu;
    uint64_t mpidr; /* affinity (Aff3:Aff2:Aff1:Aff0) */
    struct vgic_cpu vgic;
    /* Written by this CPU only (relaxed atomics, so others read whole values). */
    uint64_t entries[HYP_ENTRY_KINDS];
};

/* Counts one entry into EL2 on v's CPU. */
static inline void vcpu_count_entry(struct vcpu *v, enum hyp_entry why)
{
    __atomic_store_n(&v->entries[why], __atomic_load_n(&v->entries[why], __ATOMIC_RELAXED) + 1u,
                     __ATOMIC_RELAXED);
}

_Static_assert(__builtin_offsetof(struct vcpu, guest) == 0, "vectors.S saves guest registers at TPIDR_EL2");

extern struct vcpu hyp_vcpu[HYP_MAX_CPUS];

/* Prints one line per CPU with a partition: its EL2 entries, in total and by enum hyp_entry
 * (`rtmux: el2-entries cpu=N partition=NAME total=N dabt=N ...`). */
void vcpu_report_entries(void);
/* Each CPU's EL2 stack (start.S sets SP to the top of its own; every guest entry resets it there). */
extern uint8_t hyp_stacks[HYP_MAX_CPUS][HYP_STACK_SIZE];

#endif /* HYP_VCPU_H */
