/*
 * Per-CPU architectural state the core keeps in struct vcpu: the guest's register file (saved and
 * restored by vectors.S; its offsets come from asm-offsets.c) and the virtual GIC state of a CPU whose
 * interrupts go through EL2.
 */
#ifndef HYP_ARCH_VCPU_STATE_H
#define HYP_ARCH_VCPU_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "arm64/sysreg.h"
#include "drivers/gic.h"
#include "hyp/limits.h"

/* What an exception from a lower EL saves: the guest's general registers and return state. */
struct guest_regs {
    uint64_t x[31];
    uint64_t elr;  /* ELR_EL2: guest PC */
    uint64_t spsr; /* SPSR_EL2: guest PSTATE */
    uint64_t pad;
};

_Static_assert(sizeof(struct guest_regs) % 16 == 0, "guest_regs keeps SP 16-byte aligned");

/* The trapped instruction counts as executed (emulated, or skipped as a no-op): the guest resumes after
 * it, and a software step its debugger has in progress completes as on hardware (PSTATE.SS clear: the
 * step exception is taken before the next instruction runs, not after it). */
static inline void guest_skip_insn(struct guest_regs *g)
{
    g->elr += 4;
    g->spsr &= ~(uint64_t)SPSR_SS;
}
_Static_assert(__builtin_offsetof(struct guest_regs, x) == 0, "vectors.S stores x0..x29 at 8 * n");

/* What a CPU shared by two partitions (shared-core mode) keeps of the world that is not running: every EL1
 * and EL0 register either can write (listed in guest.c, which saves them in that order), the FP/SIMD file,
 * for the rtos (which owns the physical CPU interface) its GIC CPU-interface registers, and for Linux
 * which of its PMU counters were enabled (the rest of the PMU and the breakpoints stay in place: the
 * rtos's accesses to them trap). The EL1 timers are not here: the rtos uses the physical one and Linux
 * the virtual one, and each stays live. */
#define EL1_SAVED_SYSREGS 24u
struct el1_state {
    uint64_t sysreg[EL1_SAVED_SYSREGS];
    struct gic_cpuif_state cpuif; /* the rtos's physical CPU interface (shared-core mode) */
    uint64_t pmcnten;             /* Linux's PMCNTENSET_EL0 */
    uint64_t fpcr, fpsr;
    __uint128_t v[32] __attribute__((aligned(16))); /* arch_fp_save's layout: q0..q31 */
};

/* A purely virtual level-triggered interrupt (an emulated device's SPI): re-sampled after the guest's
 * EOI and whenever the device model says it may have changed. Its distributor state has no physical
 * register behind it, so the guest's priority and routing for it live here (vgicd.c writes them). */
struct vgic_level {
    unsigned intid; /* 0: unused slot */
    bool (*line)(const void *ctx);
    const void *ctx;
    uint8_t prio; /* the guest's GICD_IPRIORITYR byte (0, the reset value, at every start) */
    uint8_t cpu;  /* the CPU its GICD_IROUTER names (a CPU of the partition; its first at every start) */
};

#define VGIC_MAX_LEVELS 2u

/* A partition's interrupts as its distributor view (vgicd.c) and its list registers (vgic.c) see them. */
struct vgic_dist {
    uint32_t irqs[HYP_INTID_WORDS]; /* bitmap of the SPIs (INTID >= 32) the partition owns */
    /* The emulated SPIs it sees (level sources with no physical line: its UART, the V-Bus device), and
     * those it enabled in its distributor view. An emulated interrupt is injected only while enabled, as
     * a distributor forwards only enabled ones: a driver that freed its interrupt with its device's line
     * still high must not get it again and again. Cleared at every start. */
    uint32_t virqs[HYP_INTID_WORDS], virq_enabled[HYP_INTID_WORDS];
    struct vgic_level level[VGIC_MAX_LEVELS]; /* those emulated SPIs' sources, priorities and routes */
    /* A Linux partition that shares a CPU with the rtos: the priorities it gave its SPIs
     * (GICD_IPRIORITYR), which physically are RTMUX_PRIO_LINUX (vgicd.c); 0 at every start. */
    uint8_t spi_prio[HYP_MAX_INTID];
};

/* One CPU's virtual CPU interface state. The list registers are this CPU's system registers, so only
 * this CPU lists interrupts for itself: another CPU of the partition hands it SGIs and level changes
 * through sgi_in and resync (atomic) and the hypervisor's kick SGI (vgic.c). */
struct vgic_cpu {
    unsigned nlr;                         /* list registers in use (implemented, at most ICH_LR_MAX) */
    uint32_t sw_pending[HYP_INTID_WORDS]; /* virtual interrupts waiting for a free list register */
    uint32_t gicr_waker;                  /* the guest's view of GICR_WAKER */
    uint32_t sgi_in;                      /* SGIs other CPUs sent (bit n = SGI n), not listed yet */
    uint32_t resync;                      /* non-zero: re-sample the level sources routed here */
    /* On a CPU shared with the rtos, the guest's SGI/PPI enables and priorities (its redistributor view):
     * the physical registers are partly the rtos's, and Linux's own PPIs are kept at RTMUX_PRIO_LINUX. */
    uint32_t priv_enabled;
    uint8_t priv_prio[32];
};

#endif /* HYP_ARCH_VCPU_STATE_H */
