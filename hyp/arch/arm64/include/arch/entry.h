/*
 * The functions assembly calls and the assembly functions C calls: the one place their prototypes live.
 */
#ifndef HYP_ARCH_ENTRY_H
#define HYP_ARCH_ENTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/vcpu_state.h"

/* start.S -> C. secondary_entry is the address CPUs started with PSCI CPU_ON must begin at (context id
 * = CPU index). */
void hyp_main(unsigned cpu, uint64_t dtb, uint64_t secondary_entry) __attribute__((noreturn));
void hyp_secondary(unsigned cpu) __attribute__((noreturn));
void mmu_el2_init(void);
void mmu_el2_enable(void);
/* C (hyp_main): maps the board's RAM [base, base + size) at EL2 (1 GiB granules); false when it cannot
 * (beyond the 39-bit VA). Every CPU shares the table; CPUs started later see it at once. */
bool mmu_el2_map_ram(uint64_t base, uint64_t size);
/* vectors.S -> C (trap.c): exceptions from the partitions, and those taken in the hypervisor. */
void hyp_guest_sync(void);
void hyp_guest_irq(void);
void hyp_guest_serror(void) __attribute__((noreturn));
void hyp_el2_irq(void);
void hyp_bad_exception(uint64_t kind, uint64_t esr, uint64_t elr, uint64_t far) __attribute__((noreturn));

/* C -> guest_enter.S: loads the guest's registers and returns into it. */
void arch_guest_enter(struct guest_regs *regs) __attribute__((noreturn));
/* C -> guest_enter.S: zeroes the FP/SIMD registers, FPCR and FPSR; saves them into / loads them from a
 * struct el1_state (a world leaving or entering a shared CPU). */
void arch_fp_reset(void);
void arch_fp_save(struct el1_state *s);
void arch_fp_load(const struct el1_state *s);

/* A hypervisor task's paused state: x19..x30, then SP (guest_enter.S's layout). */
struct hyp_ctx {
    uint64_t reg[13];
};
/* C -> guest_enter.S: arch_ctx_save returns false after saving, true when arch_ctx_resume comes back to
 * it; arch_run_on_stack calls fn(arg) on another stack (fn never returns). */
bool arch_ctx_save(struct hyp_ctx *c) __attribute__((returns_twice));
void arch_ctx_resume(const struct hyp_ctx *c) __attribute__((noreturn));
void arch_run_on_stack(void *top, void (*fn)(void *arg), void *arg) __attribute__((noreturn));

#endif /* HYP_ARCH_ENTRY_H */
