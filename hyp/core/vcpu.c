/*
 * The per-CPU hypervisor state (hyp/vcpu.h); start.S points each CPU's TPIDR_EL2 at its entry.
 */
#include "hyp/vcpu.h"

struct vcpu hyp_vcpu[HYP_MAX_CPUS];
uint8_t hyp_stacks[HYP_MAX_CPUS][HYP_STACK_SIZE] __attribute__((aligned(16)));
