/*
 * Compiled to assembly only; the Makefile turns the "->NAME value" markers into asm-offsets.h, so the
 * assembly never hard-codes a structure layout or a table size.
 */
#include <stddef.h>

#include "hyp/limits.h"
#include "hyp/vcpu.h"

#define DEFINE(sym, val) __asm__ volatile("\n.ascii \"->" #sym " %0\"" : : "i"(val))

void asm_offsets(void);

void asm_offsets(void)
{
    DEFINE(GUEST_X30, offsetof(struct guest_regs, x) + 30 * sizeof(uint64_t));
    DEFINE(GUEST_SPSR, offsetof(struct guest_regs, spsr));
    DEFINE(VCPU_SIZE, sizeof(struct vcpu));
    DEFINE(HYP_NCPUS, HYP_MAX_CPUS);
    DEFINE(HYP_STACK_BYTES, HYP_STACK_SIZE);
    DEFINE(VCPU_CPU, offsetof(struct vcpu, cpu));
    DEFINE(EL1_FPCR, offsetof(struct el1_state, fpcr));
    DEFINE(EL1_FPSR, offsetof(struct el1_state, fpsr));
    DEFINE(EL1_V, offsetof(struct el1_state, v));
}
