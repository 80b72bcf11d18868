/*
 * Compiled to assembly only; the Makefile turns the "->NAME value" markers into asm-offsets.h.
 */
#include <stddef.h>

#include "arch/context.h"
#include "arch/cpu.h"
#include "arm64/esr.h"

#define DEFINE(sym, val) __asm__ volatile("\n.ascii \"->" #sym " %0\"" : : "i"(val))

void asm_offsets(void);

void asm_offsets(void)
{
    DEFINE(CTX_X19, offsetof(struct arch_context, x19_x28));
    DEFINE(CTX_FP, offsetof(struct arch_context, fp));
    DEFINE(CTX_SP, offsetof(struct arch_context, sp));
    DEFINE(CTX_FPCR, offsetof(struct arch_context, fpcr));
    DEFINE(CTX_TPIDR, offsetof(struct arch_context, tpidr));
    DEFINE(CTX_Q, offsetof(struct arch_context, q));
    DEFINE(FRAME_SIZE, sizeof(struct arch_frame));
    DEFINE(FRAME_X30, offsetof(struct arch_frame, x) + 30 * sizeof(uint64_t));
    DEFINE(FRAME_SPSR, offsetof(struct arch_frame, spsr));
    DEFINE(FPR_Q, offsetof(struct arch_fp_regs, q));
    DEFINE(FPR_FPCR, offsetof(struct arch_fp_regs, fpcr));
    DEFINE(FPR_FPSR, offsetof(struct arch_fp_regs, fpsr));
    DEFINE(FPR_SIZE, sizeof(struct arch_fp_regs));
    DEFINE(EC_FP_ASIMD, ESR_EC_FP_ASIMD);
    DEFINE(IRQ_STACK_SIZE, ARCH_IRQ_STACK_SIZE);
    DEFINE(SEC_SP, offsetof(struct arch_secondary, sp));
    DEFINE(SEC_ENTRY, offsetof(struct arch_secondary, entry));
    DEFINE(SEC_ARG, offsetof(struct arch_secondary, arg));
}
