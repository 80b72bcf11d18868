/*
 * Per-CPU architectural state the core keeps in struct vcpu: the guest's register file (saved and
 * restored by vectors.S; its offsets come from asm-offsets.c) and the virtual GIC state of a CPU whose
 * interrupts go through EL2.
 */
#ifndef HYP_ARCH_VCPU_STATE_H
#define HYP_ARCH_VCPU_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "hyp/limits.h"

/* What an exception from a lower EL saves: the guest's general registers and return state. */
struct guest_regs {
    uint64_t x[31];
    uint64_t elr;  /* ELR_EL2: guest PC */
    uint64_t spsr; /* SPSR_EL2: guest PSTATE */
    uint64_t pad;
};

_Static_assert(sizeof(struct guest_regs) % 16 == 0, "guest_regs keeps SP 16-byte aligned");
_Static_assert(__builtin_offsetof(struct guest_regs, x) == 0, "vectors.S stores x0..x29 at 8 * n");

/* A purely virtual level-triggered interrupt (an emulated device's line): re-sampled after the guest's
 * EOI and whenever the device model says it may have changed. */
struct vgic_level {
    unsigned intid; /* 0: unused slot */
    bool (*line)(const void *ctx);
    const void *ctx;
};

#define VGIC_MAX_LEVELS 2u

struct vgic_cpu {
    unsigned nlr;                         /* list registers in use (implemented, at most ICH_LR_MAX) */
    uint32_t sw_pending[HYP_INTID_WORDS]; /* virtual interrupts waiting for a free list register */
    uint32_t gicr_waker;                  /* the guest's view of GICR_WAKER */
    struct vgic_level level[VGIC_MAX_LEVELS];
};

#endif /* HYP_ARCH_VCPU_STATE_H */
