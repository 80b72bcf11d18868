/*
 * arch_ contract: the small set of CPU operations the portable kernel needs.
 */
#ifndef ARCH_CPU_H
#define ARCH_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/context.h"
#include "arm64/sysreg.h"

/* Masks IRQs and returns the previous DAIF, for arch_irq_unlock. */
static inline uint64_t arch_irq_lock(void)
{
    uint64_t flags;
    __asm__ volatile("mrs %0, daif\n\tmsr daifset, #2" : "=r"(flags) : : "memory");
    return flags;
}

static inline void arch_irq_unlock(uint64_t flags)
{
    __asm__ volatile("msr daif, %0" : : "r"(flags) : "memory");
}

static inline void arch_irq_enable(void)
{
    __asm__ volatile("msr daifclr, #2" : : : "memory");
}

static inline int arch_irqs_masked(void)
{
    return (ARCH_READ_SYSREG(daif) & DAIF_I) != 0;
}

static inline void arch_isb(void)
{
    __asm__ volatile("isb" : : : "memory");
}

static inline void arch_wfi(void)
{
    __asm__ volatile("dsb sy\n\twfi" : : : "memory");
}

/* Virtual counter; the isb keeps the read from being hoisted above earlier code. */
static inline uint64_t arch_counter(void)
{
    uint64_t v;
    __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
}

/* Virtual counter, without the barrier: the CPU may read it a little before or after the code around
 * it (CPU-time accounting, where the same value closes one turn and opens the next). */
static inline uint64_t arch_counter_nosync(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
}

static inline uint64_t arch_counter_freq(void)
{
    return ARCH_READ_SYSREG(cntfrq_el0) & CNTFRQ_MASK;
}

/* The kernel's EL1 timer: the virtual one (default), or the physical one (boot argument timer=phys, set
 * once before the first arm: kernel/time.c), which a CPU shared with Linux needs: there the virtual timer
 * is Linux's, and the rtos must never touch it. The counter read stays the virtual one: CNTVOFF is 0
 * both bare metal (the rtos's EL2 set-up) and under rtmux, so both timers compare against it. */
extern bool arch_timer_phys;

/* Program the kernel's EL1 timer to fire when the counter reaches cval (absolute). */
static inline void arch_timer_arm(uint64_t cval)
{
    if (arch_timer_phys) {
        ARCH_WRITE_SYSREG(cntp_cval_el0, cval);
        ARCH_WRITE_SYSREG(cntp_ctl_el0, CNT_CTL_ENABLE);
    } else {
        ARCH_WRITE_SYSREG(cntv_cval_el0, cval);
        ARCH_WRITE_SYSREG(cntv_ctl_el0, CNT_CTL_ENABLE);
    }
    arch_isb();
}

static inline void arch_timer_disarm(void)
{
    if (arch_timer_phys) {
        ARCH_WRITE_SYSREG(cntp_ctl_el0, 0);
    } else {
        ARCH_WRITE_SYSREG(cntv_ctl_el0, 0);
    }
    arch_isb();
}

/* The EL1 timer the kernel does not use (an application's second timer: the selftest's and the latency
 * app's interrupt loads), or false when there is none the rtos may use (timer=phys: the virtual one is
 * not the rtos's). */
static inline bool arch_spare_timer_available(void)
{
    return !arch_timer_phys;
}

static inline uint64_t arch_mpidr_affinity(void)
{
    return mpidr_affinity(ARCH_READ_SYSREG(mpidr_el1));
}

/* Masks IRQs (the end of a handler's unmasked run: irq.c). */
static inline void arch_irq_disable(void)
{
    __asm__ volatile("msr daifset, #2" : : : "memory");
}

/*
 * Interrupt nesting (rtos/irq.h, docs/architecture.md "Interrupts"): a handler runs with IRQs unmasked,
 * so the GIC signals only interrupts more urgent than every one in progress (its running priority) and
 * each nesting level has a distinct priority. ARCH_IRQ_LEVELS bounds the depth (rt_irq_attach refuses
 * more distinct priorities than that, so the bound holds whatever the GIC's priority bits).
 *
 * Handlers run on the interrupt stack (arch_irq_stack, vectors.S), not on the interrupted thread's: a
 * thread's stack holds one exception frame and the kernel's switch path whatever its handlers and their
 * nesting need. ARCH_IRQ_STACK_SIZE: ARCH_IRQ_LEVELS frames (272 bytes each) and 768 bytes of C per level.
 */
#define ARCH_IRQ_LEVELS     8u
#define ARCH_IRQ_STACK_SIZE 8192u
extern uint64_t arch_irq_stack[ARCH_IRQ_STACK_SIZE / 8u];

/*
 * Lazy FP/SIMD for interrupt handlers (rtos/irq.h). The registers belong to a thread (the kernel's
 * fp_holder, which is enabled while it runs and whose state arch_fp_save/arch_fp_load move), and the
 * kernel is built without FP/SIMD. arch_irq_fp_enter, at the entry of each
 * nesting level before its first handler, makes FP/SIMD trap; a handler's first FP/SIMD instruction then
 * takes the trap, which saves the registers as the level found them (the interrupted thread's, or the
 * interrupted handler's) into arch_irq_fp[level] (through arch_irq_fp_slot), enables FP/SIMD with FPCR
 * 0 and lets the handler go on (vectors.S). arch_irq_fp_exit, after the level's last handler, loads them
 * back if that happened and gives FP/SIMD back the state the level found (enabled for a thread or for a
 * handler that had used it, trapping for one that had not). The ISBs make each CPACR_EL1 write take
 * effect before the next FP/SIMD instruction.
 */
extern struct arch_fp_regs arch_irq_fp[ARCH_IRQ_LEVELS];
extern struct arch_fp_regs *arch_irq_fp_slot;
/* Loads *regs into v0-v31, FPCR and FPSR (switch.S). Only for arch_irq_fp_exit: it changes d8-d15,
 * which AAPCS64 has callers keep, and only the kernel (built without FP/SIMD) calls it. */
void arch_irq_fp_restore(const struct arch_fp_regs *regs);

/* Returns the CPACR_EL1 the level found, for arch_irq_fp_exit. */
static inline uint64_t arch_irq_fp_enter(unsigned level)
{
    uint64_t found = ARCH_READ_SYSREG(cpacr_el1);
    arch_irq_fp_slot = &arch_irq_fp[level];
    if (found != CPACR_EL1_FPEN_ALL_TRAPPED) {
        __asm__ volatile("msr cpacr_el1, %x0\n\tisb" : : "rZ"((uint64_t)CPACR_EL1_FPEN_ALL_TRAPPED));
    }
    return found;
}

static inline void arch_irq_fp_exit(unsigned level, uint64_t found)
{
    /* Still trapping <=> no handler of this level touched FP/SIMD: the registers are as it found them. */
    uint64_t now = ARCH_READ_SYSREG(cpacr_el1);
    if (now != CPACR_EL1_FPEN_ALL_TRAPPED) {
        arch_irq_fp_restore(&arch_irq_fp[level]); /* the trap enabled FP/SIMD (its ERET synchronised it) */
    }
    if (level > 0) {
        arch_irq_fp_slot = &arch_irq_fp[level - 1u];
    }
    if (now != found) {
        /* No memory clobber: the write orders against FP/SIMD instructions only (the ISB), and the
         * kernel has none; kernel data may stay in registers across it. */
        __asm__ volatile("msr cpacr_el1, %x0\n\tisb" : : "rZ"(found));
    }
}

/* Implemented in assembly (switch.S) */
void arch_switch(struct arch_context *from, struct arch_context *to);
/* A thread's FP/SIMD registers (v0-v31, FPCR, FPSR) to and from its context; FP/SIMD enabled. */
void arch_fp_save(struct arch_context *ctx);
void arch_fp_load(const struct arch_context *ctx);

/* A thread's FP/SIMD: enabled for a thread whose state is in the registers, trapping for every other
 * one, whose first FP/SIMD instruction then reaches the kernel (k_fp_first_use, through vectors.S). The
 * ISB makes the write take effect before the thread's next FP/SIMD instruction. */
static inline void arch_fp_enable(bool on)
{
    __asm__ volatile(
        "msr cpacr_el1, %x0\n\tisb"
        :
        : "rZ"(on ? (uint64_t)CPACR_EL1_FPEN_NONE_TRAPPED : (uint64_t)CPACR_EL1_FPEN_ALL_TRAPPED));
}
void arch_thread_start(void);

/* Implemented in arch C files */
void arch_mmu_init(void);
/* A new thread's first C function: main(entry, arg), called by arch_thread_start. The kernel passes
 * it in so that the arch layer calls no kernel symbol (no dependency cycle between the layers). */
typedef void (*arch_thread_main_t)(void (*entry)(void *), void *arg);
/* Sets up a new thread's context; the top arch_tls_reserve() bytes of its stack become its copy of the
 * image's thread-local storage (TPIDR_EL0 points at it), the stack proper starts below. */
void arch_context_init(struct arch_context *ctx, uintptr_t stack_top, arch_thread_main_t thread_main,
                       void (*entry)(void *), void *arg);
/* Bytes arch_context_init takes from the top of every stack for thread-local storage: 0 unless the
 * image has thread-local data (an application linked with the C library: errno, stdio's line). */
size_t arch_tls_reserve(void);
/* Powers the system (or, inside an rtmux partition, the partition) off; returns only on failure. */
void arch_system_off(void);
/* Reports a fatal error: PSCI SYSTEM_RESET2 with rtmux's vendor type and `cookie` where the PSCI
 * implementation offers SYSTEM_RESET2 (the rtmux hypervisor then applies the partition's fault
 * policy), else, or if it is refused, SYSTEM_OFF. Returns only if both fail. */
void arch_system_fatal(uint64_t cookie);
void arch_set_psci_conduit(unsigned entry_el);
/* Starts the CPU with affinity `mpidr` through PSCI CPU_ON at `entry`, which is
 * arch_secondary_entry (passed by the caller so that cpu.c and start.S do not depend on each other):
 * EL1 with this CPU's identity map, IRQs masked, running boot->entry(boot->arg) on boot->sp, which
 * must never return and must not call the kernel (it serves one CPU only). Returns PSCI's status
 * (PSCI_SUCCESS, or e.g. PSCI_DENIED inside an rtmux partition, which owns one CPU). */
int64_t arch_cpu_start(uint64_t mpidr, void (*entry)(void), struct arch_secondary *boot);
/* For arch_secondary_entry only: turns on the MMU with the boot CPU's tables. */
void arch_mmu_enable_secondary(void);
void arch_secondary_entry(void);

#endif /* ARCH_CPU_H */
