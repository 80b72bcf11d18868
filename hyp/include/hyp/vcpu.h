/*
 * One physical CPU's hypervisor state. TPIDR_EL2 points at the CPU's struct vcpu; `guest` comes first
 * because vectors.S saves the guest's registers there.
 */
#ifndef HYP_VCPU_H
#define HYP_VCPU_H

#include <stdbool.h>
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
    ENTRY_WFI,     /* the rtos idles on a CPU it shares with Linux: the CPU passes to Linux */
    HYP_ENTRY_KINDS
};

/* The PSCI power state of the partition's virtual CPU on this CPU (AFFINITY_INFO answers it). */
enum vcpu_power { VCPU_OFF = 0, VCPU_ON_PENDING, VCPU_ON };

/* vcpu.requests: what another CPU of the partition asks of this one; it is served when this CPU next
 * leaves the guest (the kick SGI makes it leave) or wakes in the hypervisor. */
#define VCPU_REQ_STOP 1u /* the partition stops or restarts: quiesce and turn off */

struct vcpu {
    struct guest_regs guest;
    struct partition *part; /* NULL: the CPU belongs to no partition (parked) */
    unsigned cpu;
    uint64_t mpidr; /* affinity (Aff3:Aff2:Aff1:Aff0) */
    struct vgic_cpu vgic;
    /* enum vcpu_power. Changed under the partition's CPU lock (lifecycle.c), read by any CPU; the
     * transition to ON_PENDING publishes on_entry and on_ctx (CPU_ON's entry point and context id). */
    volatile int power;
    uint64_t on_entry, on_ctx;
    uint32_t requests; /* VCPU_REQ_*; set and cleared under the partition's CPU lock */
    bool leaving;      /* in CPU_OFF, quiescing (under the same lock): no longer counted as on */
    /* Written by this CPU only (relaxed atomics, so others read whole values). */
    uint64_t entries[HYP_ENTRY_KINDS];
    /* Shared-core mode: this world's EL1 state while the other partition has the CPU. */
    struct el1_state saved;
};

/* Counts one entry into EL2 on v's CPU. */
static inline void vcpu_count_entry(struct vcpu *v, enum hyp_entry why)
{
    __atomic_store_n(&v->entries[why], __atomic_load_n(&v->entries[why], __ATOMIC_RELAXED) + 1u,
                     __ATOMIC_RELAXED);
}

_Static_assert(__builtin_offsetof(struct vcpu, guest) == 0,
               "vectors.S saves guest registers at TPIDR_EL2 (the running world's struct vcpu)");

/* hyp_vcpu[n]: CPU n's partition, or on a CPU an rtos shares with Linux, Linux's virtual CPU there;
 * hyp_rtos_vcpu[n]: that rtos's (unused on other CPUs). part_vcpu() picks the right one. */
extern struct vcpu hyp_vcpu[HYP_MAX_CPUS];
extern struct vcpu hyp_rtos_vcpu[HYP_MAX_CPUS];

/* Prints one line per CPU with a partition: its EL2 entries, in total and by enum hyp_entry
 * (`rtmux: el2-entries cpu=N partition=NAME total=N dabt=N ...`), and after a partition's last CPU the
 * partition's emulated MMIO accesses (mmio_report). */
void vcpu_report_entries(void);
/* Each CPU's EL2 stack (start.S sets SP to the top of its own; every guest entry resets it there). */
extern uint8_t hyp_stacks[HYP_MAX_CPUS][HYP_STACK_SIZE];

#endif /* HYP_VCPU_H */
