/*
 * Entering a partition on this CPU: the EL2 controls that make it a guest, then its entry state; and
 * quiescing what a stopped or restarting partition leaves behind (its interrupts, its timers).
 */
#include "arch/guest.h"

#include "arch/cpu.h"
#include "arch/entry.h"
#include "arch/vgic.h"
#include "arm64/gicv3.h"
#include "arm64/sysreg.h"
#include "drivers/gic.h"
#include "hyp/partition.h"
#include "hyp/vcpu.h"
#include "lib/prio.h"

/* 39-bit IPA (level-1 start), write-back inner-shareable walks, 4 KiB granule, 40-bit PA. */
#define VTCR_VALUE                                                                                   \
    (TCR_T0SZ(39) | VTCR_EL2_SL0_L1 | TCR_IRGN0_WBWA | TCR_ORGN0_WBWA | TCR_SH0_INNER | TCR_TG0_4K | \
     VTCR_EL2_PS_40BIT | VTCR_EL2_RES1)

/* Every SGI and PPI bit of a redistributor. */
#define ALL_PRIVATE_IRQS 0xffffffffu

/*
 * What a guest may not touch, for every partition: SMC (PSCI is the hypervisor's), data cache
 * maintenance by set/way (it would reach caches other partitions share), the auxiliary and
 * implementation-defined control registers (on hardware they switch off caches or prefetchers for the
 * whole cluster). trap.c emulates or refuses them.
 */
#define HCR_GUEST \
    (HCR_EL2_VM | HCR_EL2_RW | HCR_EL2_TSC | HCR_EL2_BSU_IS | HCR_EL2_TSW | HCR_EL2_TACR | HCR_EL2_TIDCP)
/* Statistical profiling and trace filter control trap for every partition: no partition's DTB
 * describes those units (dtgen.py), and their buffers would write memory behind the CPU's back. */
#define MDCR_ALWAYS (MDCR_EL2_TPMS | MDCR_EL2_TTRF)
/* The rtos uses neither the PMU nor self-hosted debug; on a CPU it shares with Linux they hold Linux's
 * state, so the rtos's accesses trap (trap.c: read as zero, writes ignored). */
#define MDCR_RTOS \
    (MDCR_ALWAYS | MDCR_EL2_TPMCR | MDCR_EL2_TPM | MDCR_EL2_TDA | MDCR_EL2_TDOSA | MDCR_EL2_TDRA)

/* The EL1 and EL0 system registers a partition can write (the timers apart), in struct el1_state's
 * order: what a CPU shared by two partitions switches (shared-core mode). */
// clang-format off
#define EL1_SYSREGS(X) \
    X(sctlr_el1) \
    X(cpacr_el1) \
    X(vbar_el1) \
    X(ttbr0_el1) \
    X(ttbr1_el1) \
    X(tcr_el1) \
    X(mair_el1) \
    X(amair_el1) \
    X(contextidr_el1) \
    X(tpidr_el1) \
    X(tpidr_el0) \
    X(tpidrro_el0) \
    X(sp_el0) \
    X(sp_el1) \
    X(elr_el1) \
    X(spsr_el1) \
    X(esr_el1) \
    X(far_el1) \
    X(afsr0_el1) \
    X(afsr1_el1) \
    X(par_el1) \
    X(csselr_el1) \
    X(cntkctl_el1) \
    X(mdscr_el1)
// clang-format on
#define COUNT_ONE(reg) +1
_Static_assert(0 EL1_SYSREGS(COUNT_ONE) == EL1_SAVED_SYSREGS, "struct el1_state holds every register listed");

/* MDCR_EL2.HPMN: every event counter is EL1's (HPMN = 0 is unpredictable before FEAT_HPMN0, so the rtos
 * keeps the same value although its accesses trap). */
static uint64_t mdcr_hpmn(void)
{
    return (ARCH_READ_SYSREG(pmcr_el0) >> PMCR_N_SHIFT) & PMCR_N_MASK & MDCR_EL2_HPMN_MASK;
}

/*
 * MDCR_EL2 for Linux. A CPU Linux owns is Linux's, its PMU and self-hosted debug included (perf's
 * hardware events, ptrace's breakpoints, watchpoints and single step): none of their registers trap, and
 * every event counter is EL1's (HPMN = PMCR_EL0.N). Debug exceptions target EL1 (TDE clear): a
 * breakpoint or watchpoint Linux aims at the hypervisor's addresses, or a step over a trapped
 * instruction, is never taken at or routed to EL2. Counting at EL2 is prohibited where the PMU can
 * prohibit it: event counters from PMUv3p1 (HPMD), the cycle counter from PMUv3p5 (HCCD). A PMUv3 of
 * Armv8.0 (QEMU's Cortex-A72, a Raspberry Pi 4's Cortex-A72) has neither: there a counter Linux sets to
 * count at EL2 (PMEVTYPER/PMCCFILTR.NSH) also counts the hypervisor's work on that CPU, which Linux
 * could time with its own counter anyway; on a shared CPU its counters are stopped while the rtos runs.
 */
static uint64_t mdcr_linux(void)
{
    uint64_t mdcr = MDCR_ALWAYS | mdcr_hpmn();
    unsigned pmuver =
        (unsigned)(ARCH_READ_SYSREG(id_aa64dfr0_el1) >> ID_DFR0_PMUVER_SHIFT) & ID_DFR0_FIELD_MASK;
    if (pmuver != ID_DFR0_PMUVER_IMPDEF && pmuver >= ID_DFR0_PMUVER_V3P1) {
        mdcr |= MDCR_EL2_HPMD;
    }
    if (pmuver != ID_DFR0_PMUVER_IMPDEF && pmuver >= ID_DFR0_PMUVER_V3P5) {
        mdcr |= MDCR_EL2_HCCD;
    }
    return mdcr;
}

/* Breakpoint n's or watchpoint n's register pair, off and cleared (the register number is part of the
 * instruction, so each has its own case; the architecture has at most 16 of each). */
// clang-format off
#define DBG_PAIR_CLEAR(n) \
    case n: \
        if (watchpoint) { \
            ARCH_WRITE_SYSREG(dbgwcr##n##_el1, 0); \
            ARCH_WRITE_SYSREG(dbgwvr##n##_el1, 0); \
        } else { \
            ARCH_WRITE_SYSREG(dbgbcr##n##_el1, 0); \
            ARCH_WRITE_SYSREG(dbgbvr##n##_el1, 0); \
        } \
        break;
// clang-format on

static void dbg_clear(unsigned n, bool watchpoint)
{
    switch (n) {
        DBG_PAIR_CLEAR(0)
        DBG_PAIR_CLEAR(1)
        DBG_PAIR_CLEAR(2)
        DBG_PAIR_CLEAR(3)
        DBG_PAIR_CLEAR(4)
        DBG_PAIR_CLEAR(5)
        DBG_PAIR_CLEAR(6)
        DBG_PAIR_CLEAR(7)
        DBG_PAIR_CLEAR(8)
        DBG_PAIR_CLEAR(9)
        DBG_PAIR_CLEAR(10)
        DBG_PAIR_CLEAR(11)
        DBG_PAIR_CLEAR(12)
        DBG_PAIR_CLEAR(13)
        DBG_PAIR_CLEAR(14)
        DBG_PAIR_CLEAR(15)
    default:
        break;
    }
}

/* Linux's PMU and self-hosted debug as a cold reset leaves them, with zero where the architecture says
 * UNKNOWN: counters stopped, zeroed, unfiltered and without interrupts; every breakpoint and watchpoint
 * off; the OS lock set (Linux clears it at boot on every CPU). A restarted Linux, or a CPU it turns on
 * again, finds nothing of the previous run. MDSCR_EL1 is with the other EL1 registers. The claim tags
 * (DBGCLAIM*, for external debuggers, which Linux does not use) are left alone: QEMU 7.2 does not
 * implement them (the write is undefined at EL2). */
static void reset_debug_pmu(void)
{
    uint64_t dfr0 = ARCH_READ_SYSREG(id_aa64dfr0_el1);
    unsigned brps = (unsigned)(dfr0 >> ID_DFR0_BRPS_SHIFT) & ID_DFR0_FIELD_MASK;
    unsigned wrps = (unsigned)(dfr0 >> ID_DFR0_WRPS_SHIFT) & ID_DFR0_FIELD_MASK;
    for (unsigned n = 0; n <= brps; n++) {
        dbg_clear(n, false);
    }
    for (unsigned n = 0; n <= wrps; n++) {
        dbg_clear(n, true);
    }
    ARCH_WRITE_SYSREG(mdccint_el1, 0);
    ARCH_WRITE_SYSREG(osdlr_el1, 0);
    ARCH_WRITE_SYSREG(oslar_el1, OSLAR_OSLK);
    ARCH_WRITE_SYSREG(pmcntenclr_el0, PMU_ALL_COUNTERS);
    ARCH_WRITE_SYSREG(pmintenclr_el1, PMU_ALL_COUNTERS);
    ARCH_WRITE_SYSREG(pmovsclr_el0, PMU_ALL_COUNTERS);
    ARCH_WRITE_SYSREG(pmcr_el0, PMCR_P | PMCR_C);
    ARCH_WRITE_SYSREG(pmuserenr_el0, 0);
    ARCH_WRITE_SYSREG(pmccfiltr_el0, 0);
    unsigned counters = (unsigned)(ARCH_READ_SYSREG(pmcr_el0) >> PMCR_N_SHIFT) & PMCR_N_MASK;
    for (unsigned n = 0; n < counters; n++) {
        ARCH_WRITE_SYSREG(pmselr_el0, n);
        arch_isb(); /* PMXEVTYPER_EL0 names the counter PMSELR_EL0 selects */
        ARCH_WRITE_SYSREG(pmxevtyper_el0, 0);
    }
    ARCH_WRITE_SYSREG(pmselr_el0, 0);
}

/* The EL1 and EL0 system registers a partition can write, back to the values it finds at its first
 * start, so a reset leaves nothing of the previous run (FP/SIMD included; Linux's PMU and debug state). */
static void reset_el1_state(const struct vcpu *v)
{
    const struct partition *p = v->part;
    /* On a shared CPU each partition has one EL1 timer (the rtos the physical, Linux the virtual one),
     * and the other's keeps running. */
    bool shared = ((p->share.mask >> v->cpu) & 1u) != 0;
    ARCH_WRITE_SYSREG(sctlr_el1, SCTLR_EL1_RES1);
    ARCH_WRITE_SYSREG(cpacr_el1, 0);
    ARCH_WRITE_SYSREG(vbar_el1, 0);
    ARCH_WRITE_SYSREG(ttbr0_el1, 0);
    ARCH_WRITE_SYSREG(ttbr1_el1, 0);
    ARCH_WRITE_SYSREG(tcr_el1, 0);
    ARCH_WRITE_SYSREG(mair_el1, 0);
    ARCH_WRITE_SYSREG(amair_el1, 0);
    ARCH_WRITE_SYSREG(contextidr_el1, 0);
    ARCH_WRITE_SYSREG(tpidr_el1, 0);
    ARCH_WRITE_SYSREG(tpidr_el0, 0);
    ARCH_WRITE_SYSREG(tpidrro_el0, 0);
    ARCH_WRITE_SYSREG(sp_el0, 0);
    ARCH_WRITE_SYSREG(sp_el1, 0);
    ARCH_WRITE_SYSREG(elr_el1, 0);
    ARCH_WRITE_SYSREG(spsr_el1, 0);
    ARCH_WRITE_SYSREG(esr_el1, 0);
    ARCH_WRITE_SYSREG(far_el1, 0);
    ARCH_WRITE_SYSREG(afsr0_el1, 0);
    ARCH_WRITE_SYSREG(afsr1_el1, 0);
    ARCH_WRITE_SYSREG(par_el1, 0);
    ARCH_WRITE_SYSREG(csselr_el1, 0);
    ARCH_WRITE_SYSREG(cntkctl_el1, 0);
    ARCH_WRITE_SYSREG(mdscr_el1, 0);
    if (p->kind == PART_LINUX) {
        reset_debug_pmu();
    }
    if (!shared || p->kind == PART_LINUX) {
        ARCH_WRITE_SYSREG(cntv_ctl_el0, 0);
        ARCH_WRITE_SYSREG(cntv_cval_el0, 0);
    }
    if (!shared || p->kind != PART_LINUX) {
        ARCH_WRITE_SYSREG(cntp_ctl_el0, 0);
        ARCH_WRITE_SYSREG(cntp_cval_el0, 0);
    }
    if (p->kind != PART_LINUX) {
        /* Direct delivery: the physical CPU interface is the partition's own (its virtual one, for a
         * trapping partition, is reset with the vGIC). */
        gic_cpuif_reset();
    }
    arch_fp_reset();
}

void arch_hyp_cpuif(void)
{
    gic_hyp_cpuif();
}

/* Whether v is the rtos of a CPU it shares with Linux. */
static bool shared_rtos(const struct vcpu *v)
{
    return v->part->kind != PART_LINUX && v->part->share.rtos;
}

/* The EL2 controls that make v's partition the guest on this CPU, and the physical CPU interface for a
 * partition whose interrupts trap (a CPU shared with the rtos carries the rtos's values there in between). */
static void guest_controls(struct vcpu *v)
{
    const struct partition *p = v->part;
    /* No HCR_EL2.FB: each virtual CPU always runs on its own physical CPU (they never migrate), so the
     * TLB and I-cache maintenance a guest does for one CPU only (local) reaches exactly the caches that
     * hold what that CPU used, and its broadcast maintenance (the inner-shareable forms, which Linux
     * uses for SMP) already reaches every CPU, tagged with its VMID. Forcing local maintenance to
     * broadcast would only make Linux's local flushes reach the rtos's CPU. Two partitions sharing a CPU
     * have their own VMIDs, so neither's TLB entries are the other's. */
    uint64_t hcr = HCR_GUEST;
    uint64_t cnthctl = CNTHCTL_EL1PCTEN | CNTHCTL_EL1PCEN;
    if (p->kind == PART_LINUX) {
        hcr |= HCR_EL2_IMO | HCR_EL2_FMO | HCR_EL2_AMO; /* interrupts through the virtual CPU interface */
        if (((p->share.mask >> v->cpu) & 1u) != 0) {
            /* The EL1 physical timer is the rtos's on this CPU (its timer=phys): Linux's accesses trap
             * and are refused; Linux uses the virtual timer. */
            cnthctl = CNTHCTL_EL1PCTEN;
        }
        arch_hyp_cpuif();
    } else if (shared_rtos(v)) {
        /* Its idle WFI is where the CPU passes to Linux (lifecycle.c, part_rtos_idle). */
        hcr |= HCR_EL2_TWI;
    }
    /* Linux's virtual CPU interface stays in place while the rtos runs, but switched off: an interrupt
     * pending in its list registers would otherwise count as a wake-up event for the rtos's idle WFI,
     * which then neither waits nor traps (QEMU, like the architecture, does not trap a WFI that would
     * complete at once), and the CPU never passes to Linux. The rest of ICH_HCR_EL2 stays live. */
    if (p->kind == PART_LINUX || shared_rtos(v)) {
        uint64_t ich = gic_vif_hcr();
        uint64_t want = p->kind == PART_LINUX ? ich | ICH_HCR_EN : ich & ~(uint64_t)ICH_HCR_EN;
        if (want != ich) {
            gic_vif_set_hcr(want);
        }
    }
    /* The rtos takes physical interrupts at EL1 directly: IMO/FMO clear, no trap on its hot path. */
    ARCH_WRITE_SYSREG(mdcr_el2, p->kind == PART_LINUX ? mdcr_linux() : MDCR_RTOS | mdcr_hpmn());
    ARCH_WRITE_SYSREG(vtcr_el2, VTCR_VALUE);
    ARCH_WRITE_SYSREG(vttbr_el2, p->vttbr);
    ARCH_WRITE_SYSREG(hcr_el2, hcr);
    ARCH_WRITE_SYSREG(cptr_el2, CPTR_EL2_RES1);
    ARCH_WRITE_SYSREG(hstr_el2, 0);
    ARCH_WRITE_SYSREG(cnthctl_el2, cnthctl);
    ARCH_WRITE_SYSREG(cntvoff_el2, 0);
    ARCH_WRITE_SYSREG(vpidr_el2, ARCH_READ_SYSREG(midr_el1));
    ARCH_WRITE_SYSREG(vmpidr_el2, ARCH_READ_SYSREG(mpidr_el1));
    ARCH_WRITE_SYSREG(tpidr_el2, (uint64_t)(uintptr_t)v); /* the running world (vectors.S saves there) */
}

struct vcpu *arch_this_vcpu(void)
{
    return (struct vcpu *)(uintptr_t)ARCH_READ_SYSREG(tpidr_el2);
}

void arch_guest_start(struct vcpu *v, uint64_t entry, uint64_t x0)
{
    guest_controls(v);
    reset_el1_state(v);
    arch_isb();
    __asm__ volatile("tlbi vmalls12e1\n\tdsb nsh\n\tisb" : : : "memory");
    for (unsigned i = 0; i < 31; i++) {
        v->guest.x[i] = 0;
    }
    v->guest.x[0] = x0;
    v->guest.elr = entry;
    v->guest.spsr = SPSR_EL1H_MASKED;
    arch_guest_enter(&v->guest);
}

#define SAVE_ONE(reg) s->sysreg[i++] = ARCH_READ_SYSREG(reg);
#define LOAD_ONE(reg) ARCH_WRITE_SYSREG(reg, s->sysreg[i++]);

void arch_world_save(struct vcpu *v)
{
    struct el1_state *s = &v->saved;
    unsigned i = 0;
    EL1_SYSREGS(SAVE_ONE)
    if (v->part->kind != PART_LINUX) {
        /* The physical CPU interface is the rtos's own (Linux's state is in the virtual one, which
         * stays in place: with IMO clear nothing of it reaches the rtos). No interrupt is active: the
         * rtos leaves only from its idle thread. */
        gic_cpuif_save(&s->cpuif);
    } else {
        /* Linux's counters stop while the rtos runs: they count Linux, and their overflow interrupts
         * are Linux's. Its breakpoints, watchpoints and step are off with its MDSCR_EL1. */
        s->pmcnten = ARCH_READ_SYSREG(pmcntenset_el0);
        ARCH_WRITE_SYSREG(pmcntenclr_el0, s->pmcnten);
    }
    arch_fp_save(s);
}

void arch_world_enter(struct vcpu *v, uint64_t *stamp)
{
    const struct el1_state *s = &v->saved;
    unsigned i = 0;
    guest_controls(v);
    EL1_SYSREGS(LOAD_ONE)
    if (v->part->kind != PART_LINUX) {
        gic_cpuif_restore(&s->cpuif);
    } else {
        ARCH_WRITE_SYSREG(pmcntenset_el0, s->pmcnten);
    }
    arch_fp_load(s);
    arch_isb();
    if (stamp != NULL) {
        *stamp = arch_counter();
    }
    arch_guest_enter(&v->guest);
}

void arch_vcpu_quiesce(struct vcpu *v)
{
    /* The EL1 timers first: a level still asserted would come straight back. On a shared CPU each
     * partition has one of them, and the private interrupts are split (VGIC_SHARED_RTOS_PRIVATE). */
    bool shared = ((v->part->share.mask >> v->cpu) & 1u) != 0;
    if (!shared || v->part->kind == PART_LINUX) {
        ARCH_WRITE_SYSREG(cntv_ctl_el0, 0);
    }
    if (!shared || v->part->kind != PART_LINUX) {
        ARCH_WRITE_SYSREG(cntp_ctl_el0, 0);
    }
    arch_isb();
    if (v->part->kind == PART_LINUX) {
        vgic_cpu_reset(v);
        gic_ppi_quiesce(v->cpu,
                        ALL_PRIVATE_IRQS & ~VGIC_HYP_PPIS & ~(shared ? VGIC_SHARED_RTOS_PRIVATE : 0u));
    } else {
        gic_ppi_quiesce(v->cpu, shared ? VGIC_SHARED_RTOS_PRIVATE : ALL_PRIVATE_IRQS);
    }
}

void arch_part_quiesce(struct partition *p)
{
    vgic_part_reset(p);
    for (unsigned intid = GIC_SPI_BASE; intid < HYP_MAX_INTID; intid++) {
        if (part_owns_irq(p, intid)) {
            gic_spi_quiesce(intid);
        }
    }
}

void arch_part_irqs_init(struct partition *p)
{
    uint64_t aff = part_first_affinity(p);
    for (unsigned intid = GIC_SPI_BASE; intid < HYP_MAX_INTID; intid++) {
        if (part_owns_irq(p, intid)) {
            gic_spi_quiesce(intid);
            gic_spi_place(intid, aff);
            if (p->kind == PART_LINUX && p->share.mask != 0) {
                /* It may reach a CPU the rtos shares: below the rtos's mask whatever Linux writes
                 * (vgicd.c keeps Linux's own value for its list registers). */
                gic_spi_set_priority(intid, RTMUX_PRIO_LINUX);
                p->vgic.spi_prio[intid] = 0;
            }
        }
    }
}

void arch_guest_park(bool keep_irqs)
{
    if (keep_irqs) {
        arch_guest_wait_setup(NULL);
        arch_irq_enable();
    } else {
        ARCH_WRITE_SYSREG(hcr_el2, HCR_EL2_RW); /* nothing of the partition's can reach this CPU any more */
    }
    for (;;) {
        arch_wfi();
    }
}

void arch_guest_wait_setup(struct vcpu *v)
{
    ARCH_WRITE_SYSREG(hcr_el2, HCR_EL2_RW | HCR_EL2_IMO | HCR_EL2_FMO);
    if (v != NULL) {
        ARCH_WRITE_SYSREG(tpidr_el2, (uint64_t)(uintptr_t)v);
    }
    arch_hyp_cpuif(); /* on a shared CPU the rtos may have left its own values there */
}
