/*
 * arm64 thread context and exception frame. Offsets used by assembly are generated from these
 * structs (asm-offsets.c), never written by hand.
 */
#ifndef ARCH_CONTEXT_H
#define ARCH_CONTEXT_H

#include <stdint.h>

/*
 * Saved by arch_switch(): the AAPCS64 callee-saved registers, the stack pointer and the whole FP/SIMD
 * register file. Everything else of a switched-out thread is either caller-saved (dead across the
 * call) or lives in an exception frame on the thread's own stack.
 */
struct arch_context {
    uint64_t x19_x28[10];
    uint64_t fp; /* x29 */
    uint64_t lr; /* x30: where arch_switch returns to */
    uint64_t sp;
    uint64_t fpcr;
    uint64_t fpsr;
    /* TPIDR_EL0: the thread's TLS block, set once by arch_context_init (0 if the image has none);
     * arch_switch loads it and never saves it back, so nothing may change TPIDR_EL0 in a thread. */
    uint64_t tpidr;
    uint64_t q[64] __attribute__((aligned(16))); /* q0..q31, low half first */
};

/*
 * The FP/SIMD state an interrupt nesting level found while one of its handlers uses FP/SIMD (rtos/irq.h):
 * saved by the level's first FP/SIMD instruction, which traps (vectors.S), and loaded back by
 * arch_irq_fp_restore before the level ends (arch/cpu.h). One area per level.
 */
struct arch_fp_regs {
    uint64_t q[64] __attribute__((aligned(16))); /* q0..q31, low half first */
    uint64_t fpcr;
    uint64_t fpsr;
};

/* What a second CPU started by arch_cpu_start needs before it can run C: read by
 * arch_secondary_entry (start.S) with the MMU off, so it must stay valid until that CPU runs. */
struct arch_secondary {
    uint64_t sp; /* top of its stack, 16-byte aligned */
    void (*entry)(void *);
    void *arg;
};

/* Pushed on the current stack by every exception entry; 16-byte multiple so SP stays aligned. */
struct arch_frame {
    uint64_t x[31];
    uint64_t elr;
    uint64_t spsr;
    uint64_t pad;
};

_Static_assert(sizeof(struct arch_frame) % 16 == 0, "exception frame keeps SP 16-byte aligned");
_Static_assert(sizeof(struct arch_frame) == 272, "RT_STACK_MIN and the docs count a 272-byte frame");
_Static_assert(__builtin_offsetof(struct arch_context, q) % 16 == 0,
               "stp/ldp of q registers need 16-byte alignment");
_Static_assert(__builtin_offsetof(struct arch_fp_regs, q) % 16 == 0,
               "stp/ldp of q registers need 16-byte alignment");
_Static_assert(__builtin_offsetof(struct arch_context, x19_x28) == 0, "switch.S stores x19..x28 first");

#endif /* ARCH_CONTEXT_H */
