/*
 * Guest register file and per-CPU hypervisor state. Offsets used by assembly are generated from these
 * structs (asm-offsets.c).
 */
#ifndef HYP_ARCH_REGS_H
#define HYP_ARCH_REGS_H

#include <stdint.h>

/* What an exception from a lower EL saves: the guest's general registers and return state. */
struct guest_regs {
    uint64_t x[31];
    uint64_t elr;  /* ELR_EL2: guest PC */
    uint64_t spsr; /* SPSR_EL2: guest PSTATE */
    uint64_t pad;
};

_Static_assert(sizeof(struct guest_regs) % 16 == 0, "guest_regs keeps SP 16-byte aligned");

#endif /* HYP_ARCH_REGS_H */
