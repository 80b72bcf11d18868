/*
 * A malicious partition: booted as the Linux partition beside the rtos, it attacks the hypervisor in
 * the way its boot arguments name (attack=NAME). Every attack prints what it did in figures it
 * computed, so a test can tell "attacked and survived" from "did not attack". tests/system/
 * test_hostile_guest.py runs them; docs/security.md lists them with their outcome.
 *
 * It runs on both GIC versions, picked at run time as the rtos picks its driver (rtos/drivers/intc.c):
 * a CPU with the GICv3 system-register interface (ID_AA64PFR0_EL1.GIC) is on a GICv3, where the guest
 * uses the ICC_* registers and its redistributor; one without it is on a GICv2, where it uses the
 * distributor's banked SGI/PPI registers and the memory-mapped CPU interface at BOARD_GICC_BASE (the
 * virtual one the hypervisor maps there), with Group 0 interrupts and SGIs through GICD_SGIR.
 */
#include "arm64/esr.h"
#include "arm64/gicv2.h"
#include "arm64/pl031.h"
#include "arm64/psci.h"
#include "arm64/sysreg.h"
#include "board.h"
#include "guest.h"

/* An address no partition has: QEMU virt's flash at 0 is never mapped at stage 2. */
#define UNMAPPED_IPA 0x1000u
/* The rtos's RAM as physical (= Linux's IPA) address: below the Linux partition's RAM. */
#define RTOS_RAM_PA 0x48000000u

/* Data abort fault status: an alignment fault (on hardware, an unaligned access to Device memory, as
 * every access is with the MMU off; QEMU 7.2 raises none). */
#define FSC_ALIGNMENT 0x21u

/* Distinct values written before a reset and looked for after it. */
#define MARK 0x5eedf00d0badcafeull

static volatile uint64_t sync_count, undef_count, abort_count, irq_count;
/* Data aborts by their fault status: injected by the hypervisor (a synchronous external abort: it
 * refused the access) and alignment faults (taken at EL1, the hypervisor never saw the access). */
static volatile uint64_t refused_count, align_count;
/* SGIs taken (any INTID below 16). */
static volatile uint64_t sgi_count;
static volatile uint32_t last_intid;

/* True on a GICv2 (set first thing in guest_main). */
static bool gic2;

static bool cpu_has_gicv3_sysregs(void)
{
    return ((GUEST_READ_SYSREG(id_aa64pfr0_el1) >> ID_PFR0_GIC_SHIFT) & ID_PFR0_GIC_MASK) != 0;
}

/* Device accesses as single loads and stores without writeback (a compiler's post-indexed store in a
 * loop has no syndrome the hypervisor can emulate: it refuses it, and skipping it would repeat the loop
 * forever), as a kernel's readl/writel are. */
static uint32_t mmio_r32(uintptr_t a)
{
    uint32_t v;
    __asm__ volatile("ldr %w0, [%1]" : "=r"(v) : "r"(a) : "memory");
    return v;
}

static uint8_t mmio_r8(uintptr_t a)
{
    uint32_t v;
    __asm__ volatile("ldrb %w0, [%1]" : "=r"(v) : "r"(a) : "memory");
    return (uint8_t)v;
}

static void mmio_w32(uintptr_t a, uint32_t v)
{
    __asm__ volatile("str %w0, [%1]" : : "r"(v), "r"(a) : "memory");
}

static void mmio_w8(uintptr_t a, uint8_t v)
{
    __asm__ volatile("strb %w0, [%1]" : : "r"((uint32_t)v), "r"(a) : "memory");
}

static uint32_t gicd_r32(uint64_t off)
{
    return mmio_r32(BOARD_GICD_BASE + off);
}

static uint8_t gicd_r8(uint64_t off)
{
    return mmio_r8(BOARD_GICD_BASE + off);
}

static void gicd_w32(uint64_t off, uint32_t v)
{
    mmio_w32(BOARD_GICD_BASE + off, v);
}

static void gicd_w8(uint64_t off, uint8_t v)
{
    mmio_w8(BOARD_GICD_BASE + off, v);
}

/* GICv2: the CPU interface the partition is given (the virtual one, GICV, mapped at GICC's address). */
static uint32_t gicc_r32(uint64_t off)
{
    return mmio_r32(BOARD_GICC_BASE + off);
}

static void gicc_w32(uint64_t off, uint32_t v)
{
    mmio_w32(BOARD_GICC_BASE + off, v);
}

/* Acknowledges the highest pending interrupt: its IAR value (GICv2: the SGI's source CPU in [12:10]). */
static uint64_t gic_ack(void)
{
    return gic2 ? gicc_r32(GICC_IAR) : GUEST_READ_SYSREG(S3_0_C12_C12_0); /* ICC_IAR1_EL1 */
}

static uint32_t gic_intid(uint64_t iar)
{
    return (uint32_t)(iar & (gic2 ? GICC_IAR_INTID : GIC_INTID_MASK));
}

/* Ends an interrupt (EOImode 0: also deactivates it). */
static void gic_eoi(uint64_t iar)
{
    if (gic2) {
        gicc_w32(GICC_EOIR, (uint32_t)iar);
    } else {
        GUEST_WRITE_SYSREG(S3_0_C12_C12_1, iar); /* ICC_EOIR1_EL1 */
    }
}

/* The running priority (0xff: nothing active). */
static uint64_t gic_rpr(void)
{
    return gic2 ? gicc_r32(GICC_RPR) : GUEST_READ_SYSREG(S3_0_C12_C11_3); /* ICC_RPR_EL1 */
}

static uint64_t gic_pmr(void)
{
    return gic2 ? gicc_r32(GICC_PMR) : GUEST_READ_SYSREG(S3_0_C4_C6_0); /* ICC_PMR_EL1 */
}

static void gic_set_pmr(uint8_t pmr)
{
    if (gic2) {
        gicc_w32(GICC_PMR, pmr);
    } else {
        GUEST_WRITE_SYSREG(S3_0_C4_C6_0, pmr);
    }
}

/* Whether the group the guest's interrupts use is enabled at its CPU interface. */
static bool gic_group_enabled(void)
{
    return gic2 ? (gicc_r32(GICC_CTLR) & GICC_CTLR_ENABLE_GRP0) != 0
                : (GUEST_READ_SYSREG(S3_0_C12_C12_7) & 1u) != 0; /* ICC_IGRPEN1_EL1 */
}

/* ---------------------------------------------------------------- exception hooks */

bool guest_on_sync(struct guest_frame *f)
{
    uint64_t ec = (f->esr >> 26) & 0x3fu;
    sync_count++;
    if (ec == 0x21u) { /* instruction abort at EL1: the attack branched with a return address in x30 */
        abort_count++;
        f->elr = f->x[30];
        return true;
    }
    if (ec == 0x25u) { /* data abort (injected by the hypervisor, or an alignment fault): skip the access */
        abort_count++;
        refused_count += (f->esr & ESR_FSC_MASK) == ESR_FSC_SEA;
        align_count += (f->esr & ESR_FSC_MASK) == FSC_ALIGNMENT;
        f->elr += 4;
        return true;
    }
    if (ec == 0x00u) { /* undefined instruction: a refused system register */
        undef_count++;
        f->elr += 4;
        return true;
    }
    return false;
}

static void rtc_irq(uint64_t iar);

void guest_on_irq(struct guest_frame *f)
{
    (void)f;
    uint64_t iar = gic_ack();
    uint32_t intid = gic_intid(iar);
    if (intid >= GIC_INTID_SPECIAL) {
        return;
    }
    irq_count++;
    sgi_count += intid < GIC_SGI_COUNT;
    last_intid = intid;
    if (intid == BOARD_RTC_INTID) {
        rtc_irq(iar); /* ends the interrupt itself, in the order its test asks for */
        return;
    }
    if (intid == BOARD_INTID_VIRT_TIMER) {
        GUEST_WRITE_SYSREG(cntv_ctl_el0, CNT_CTL_ENABLE | CNT_CTL_IMASK); /* the line drops */
    }
    gic_eoi(iar);
}

/* ---------------------------------------------------------------- GIC helpers */

/* An SGI or PPI of this CPU: its priority, then enabled (GICv3: in its redistributor's SGI_base frame;
 * GICv2: the distributor's banked registers, which are this CPU's). */
static void ppi_enable(unsigned intid, uint8_t prio)
{
    if (gic2) {
        gicd_w8(GICD_IPRIORITYR + intid, prio);
        gicd_w32(GICD_ISENABLER, 1u << intid);
        return;
    }
    volatile uint32_t *sgi = (volatile uint32_t *)(guest_gicr() + GICR_SGI_OFFSET);
    ((volatile uint8_t *)sgi)[GICR_IPRIORITYR0 + intid] = prio;
    sgi[GICR_ISENABLER0 / 4] = 1u << intid;
}

static void cpu_if_on(void)
{
    if (gic2) {
        gicc_w32(GICC_PMR, 0xffu);                  /* all priorities */
        gicc_w32(GICC_CTLR, GICC_CTLR_ENABLE_GRP0); /* EOImode 0, IRQ (FIQEn clear) */
        __asm__ volatile("dsb sy\n\tisb" ::: "memory");
        return;
    }
    GUEST_WRITE_SYSREG(S3_0_C4_C6_0, 0xffu); /* ICC_PMR_EL1: all priorities */
    GUEST_WRITE_SYSREG(S3_0_C12_C12_7, 1u);  /* ICC_IGRPEN1_EL1 */
    __asm__ volatile("isb");
}

/* SGI `sgi` to this CPU alone. */
static void sgi_self(unsigned sgi)
{
    if (gic2) {
        gicd_w32(GICD_SGIR, (GICD_SGIR_FILTER_SELF << GICD_SGIR_FILTER_SHIFT) | (sgi & GICD_SGIR_INTID_MASK));
        return;
    }
    uint64_t self = GUEST_READ_SYSREG(mpidr_el1) & 0xffu;
    GUEST_WRITE_SYSREG(S3_0_C12_C11_5, (1ull << self) | ((uint64_t)sgi << 24)); /* ICC_SGI1R_EL1 */
}

static void irqs_on(void)
{
    __asm__ volatile("msr daifclr, #2" ::: "memory");
}

static void irqs_off(void)
{
    __asm__ volatile("msr daifset, #2" ::: "memory");
}

static void timer_in(uint64_t ticks)
{
    GUEST_WRITE_SYSREG(cntv_cval_el0, guest_counter() + ticks);
    GUEST_WRITE_SYSREG(cntv_ctl_el0, CNT_CTL_ENABLE);
    __asm__ volatile("isb");
}

static void spin_ms(uint64_t ms)
{
    uint64_t end = guest_counter() + ms * guest_counter_hz() / 1000u;
    while (guest_counter() < end) {
    }
}

/* ---------------------------------------------------------------- attacks */

/* Item: the hypervisor's stack on re-entry. Asks for SYSTEM_RESET at once, every boot. */
static void attack_reset(void)
{
    guest_puts("hostile: resetting\n");
    (void)guest_hvc(PSCI_SYSTEM_RESET, 0, 0, 0);
    guest_puts("hostile: SYSTEM_RESET returned\n");
}

/* Breakpoint and watchpoint settings the attacks use (pmu-debug, state). */
#define DBGBCR_EL2_EL1_EL0    0x21e7u /* E, PMC = EL1 and EL0, BAS = 0xf, HMC: EL2 too */
#define DBGWCR_EL2_EL1_EL0_RW 0x3fffu /* E, PAC = EL1 and EL0, loads and stores, BAS = 0xff, HMC */
#define DBGWCR_MASK_SHIFT     24      /* log2 of the watched range */
#define WATCH_BASE            0x40000000u
#define WATCH_LOG2            24u
/* A cycle count the previous boot leaves above what a fresh boot reaches before its check. */
#define MARK_CYCLES (1ull << 40)

/* Leaves a trace in every piece of CPU state a reset must clear, then resets; each boot first checks
 * that nothing of the previous boot is left. */
static unsigned leaks;

static void expect_clear(const char *what, uint64_t v, uint64_t bad)
{
    if (v == bad) {
        guest_printf("hostile: leak %s = 0x%lx\n", what, (unsigned long)v);
        leaks++;
    }
}

static void attack_state(void)
{
    uint64_t v0 = 0, fpcr = GUEST_READ_SYSREG(fpcr);
    __asm__ volatile("fmov %0, d0" : "=r"(v0));
    expect_clear("TPIDR_EL1", GUEST_READ_SYSREG(tpidr_el1), MARK);
    expect_clear("TPIDR_EL0", GUEST_READ_SYSREG(tpidr_el0), MARK + 1);
    expect_clear("TPIDRRO_EL0", GUEST_READ_SYSREG(tpidrro_el0), MARK + 2);
    expect_clear("SP_EL0", GUEST_READ_SYSREG(sp_el0), MARK + 3);
    expect_clear("CONTEXTIDR_EL1", GUEST_READ_SYSREG(contextidr_el1), 0x1234u);
    expect_clear("TTBR0_EL1", GUEST_READ_SYSREG(ttbr0_el1), 0x7000u);
    expect_clear("MAIR_EL1", GUEST_READ_SYSREG(mair_el1), MARK);
    expect_clear("CNTKCTL_EL1", GUEST_READ_SYSREG(cntkctl_el1), 0x3u);
    expect_clear("d0", v0, MARK);
    expect_clear("FPCR", fpcr, 0x400000u);
    expect_clear("CNTV_CTL_EL0", GUEST_READ_SYSREG(cntv_ctl_el0) & CNT_CTL_ENABLE, CNT_CTL_ENABLE);
    expect_clear("CNTP_CTL_EL0", GUEST_READ_SYSREG(cntp_ctl_el0) & CNT_CTL_ENABLE, CNT_CTL_ENABLE);
    expect_clear(gic2 ? "GICC_PMR" : "ICC_PMR_EL1", gic_pmr(), 0xf0u);
    expect_clear(gic2 ? "GICC_CTLR.EnableGrp0" : "ICC_IGRPEN1_EL1", gic_group_enabled(), 1u);
    /* Debug and PMU: the guest's own hardware, reset with it (the OS lock set again, as at a cold reset). */
    expect_clear("MDSCR_EL1", GUEST_READ_SYSREG(mdscr_el1), MDSCR_MDE | MDSCR_KDE);
    expect_clear("DBGBVR0_EL1", GUEST_READ_SYSREG(dbgbvr0_el1), MARK & ~3ull);
    expect_clear("DBGBCR0_EL1", GUEST_READ_SYSREG(dbgbcr0_el1), DBGBCR_EL2_EL1_EL0);
    expect_clear("DBGWVR0_EL1", GUEST_READ_SYSREG(dbgwvr0_el1), WATCH_BASE);
    expect_clear("DBGWCR0_EL1", GUEST_READ_SYSREG(dbgwcr0_el1), DBGWCR_EL2_EL1_EL0_RW);
    expect_clear("OSLSR_EL1.OSLK clear (OS lock not set)", (GUEST_READ_SYSREG(oslsr_el1) & 2u) == 0, 1u);
    expect_clear("PMCR_EL0.E", GUEST_READ_SYSREG(pmcr_el0) & PMCR_E, PMCR_E);
    expect_clear("PMCNTENSET_EL0", GUEST_READ_SYSREG(pmcntenset_el0), 1ull << 31 | 1u);
    expect_clear("PMINTENSET_EL1", GUEST_READ_SYSREG(pmintenset_el1), 1u);
    expect_clear("PMOVSSET_EL0", GUEST_READ_SYSREG(pmovsset_el0), 1u);
    expect_clear("PMUSERENR_EL0", GUEST_READ_SYSREG(pmuserenr_el0), 1u);
    expect_clear("PMCCFILTR_EL0", GUEST_READ_SYSREG(pmccfiltr_el0), 1ull << 27);
    expect_clear("PMCCNTR_EL0", GUEST_READ_SYSREG(pmccntr_el0) > MARK_CYCLES, 1u);
    GUEST_WRITE_SYSREG(pmselr_el0, 0);
    __asm__ volatile("isb");
    expect_clear("PMEVTYPER0_EL0", GUEST_READ_SYSREG(pmxevtyper_el0), 0x11u);
    expect_clear("PMEVCNTR0_EL0", GUEST_READ_SYSREG(pmxevcntr_el0), 0xfffff000u);
    /* The running priority: an interrupt left active before the reset would still hold it. */
    expect_clear(gic2 ? "GICC_RPR (active interrupt)" : "ICC_RPR_EL1 (active interrupt)", gic_rpr() != 0xffu,
                 1u);
    /* The timer interrupt is still delivered (the previous boot left it active and enabled). */
    irq_count = 0;
    ppi_enable(BOARD_INTID_VIRT_TIMER, 0x80);
    cpu_if_on();
    timer_in(guest_counter_hz() / 1000u);
    irqs_on();
    spin_ms(20);
    irqs_off();
    expect_clear("no timer interrupt after the reset", irq_count == 0, 1u);
    guest_printf("hostile: state check: %u leaks\n", leaks);

    /* Dirty everything, and keep a timer interrupt active (acknowledged, never EOIed) across the reset. */
    GUEST_WRITE_SYSREG(tpidr_el1, MARK);
    GUEST_WRITE_SYSREG(tpidr_el0, MARK + 1);
    GUEST_WRITE_SYSREG(tpidrro_el0, MARK + 2);
    GUEST_WRITE_SYSREG(sp_el0, MARK + 3);
    GUEST_WRITE_SYSREG(contextidr_el1, 0x1234u);
    GUEST_WRITE_SYSREG(ttbr0_el1, 0x7000u);
    GUEST_WRITE_SYSREG(mair_el1, MARK);
    GUEST_WRITE_SYSREG(cntkctl_el1, 0x3u);
    GUEST_WRITE_SYSREG(oslar_el1, 0);
    GUEST_WRITE_SYSREG(mdscr_el1, MDSCR_MDE | MDSCR_KDE);
    GUEST_WRITE_SYSREG(dbgbvr0_el1, MARK & ~3ull);
    GUEST_WRITE_SYSREG(dbgbcr0_el1, DBGBCR_EL2_EL1_EL0);
    GUEST_WRITE_SYSREG(dbgwvr0_el1, WATCH_BASE);
    GUEST_WRITE_SYSREG(dbgwcr0_el1, DBGWCR_EL2_EL1_EL0_RW);
    GUEST_WRITE_SYSREG(pmuserenr_el0, 1u);
    GUEST_WRITE_SYSREG(pmccfiltr_el0, 1ull << 27);
    GUEST_WRITE_SYSREG(pmselr_el0, 0);
    __asm__ volatile("isb");
    GUEST_WRITE_SYSREG(pmxevtyper_el0, 0x11u);
    GUEST_WRITE_SYSREG(pmxevcntr_el0, 0xfffff000u);
    GUEST_WRITE_SYSREG(pmccntr_el0, MARK_CYCLES + 1u);
    GUEST_WRITE_SYSREG(pmovsset_el0, 1u);
    GUEST_WRITE_SYSREG(pmintenset_el1, 1u);
    GUEST_WRITE_SYSREG(pmcntenset_el0, 1ull << 31 | 1u);
    GUEST_WRITE_SYSREG(pmcr_el0, PMCR_E);
    __asm__ volatile("fmov d0, %0" : : "r"(MARK));
    GUEST_WRITE_SYSREG(fpcr, 0x400000u);
    GUEST_WRITE_SYSREG(cntp_cval_el0, guest_counter() + guest_counter_hz());
    GUEST_WRITE_SYSREG(cntp_ctl_el0, CNT_CTL_ENABLE | CNT_CTL_IMASK);
    GUEST_WRITE_SYSREG(cntv_cval_el0, 0);
    GUEST_WRITE_SYSREG(cntv_ctl_el0, CNT_CTL_ENABLE); /* fires at once */
    __asm__ volatile("isb");
    uint64_t iar = 1023;
    for (unsigned i = 0; i < 1000000 && gic_intid(iar) >= GIC_INTID_SPECIAL; i++) {
        iar = gic_ack(); /* acknowledge: active from now on */
    }
    gic_set_pmr(0xf0u);
    guest_printf("hostile: acknowledged INTID %lu, left active; resetting\n", (unsigned long)gic_intid(iar));
    (void)guest_hvc(PSCI_SYSTEM_RESET, 0, 0, 0);
    guest_puts("hostile: SYSTEM_RESET returned\n");
}

/* Powers off with the virtual timer firing, its PPI at the top priority and enabled: the interrupt
 * would keep arriving at EL2 on this CPU after the partition is gone. */
static void attack_poweroff_timer(void)
{
    irqs_off();
    ppi_enable(BOARD_INTID_VIRT_TIMER, 0x00);
    cpu_if_on();
    GUEST_WRITE_SYSREG(cntv_cval_el0, 0);
    GUEST_WRITE_SYSREG(cntv_ctl_el0, CNT_CTL_ENABLE);
    __asm__ volatile("isb");
    guest_puts("hostile: virtual timer firing at top priority; powering off\n");
    guest_power_off();
}

/* Branches to an address outside the partition, again and again (instruction aborts), then reads one
 * (data aborts). */
static void attack_abort_flood(void)
{
    uint64_t n = guest_arg_u64("count", 100000);
    for (uint64_t i = 0; i < n; i++) {
        __asm__ volatile("blr %0" : : "r"((uint64_t)UNMAPPED_IPA) : "x30", "memory");
    }
    uint64_t iabt = abort_count;
    for (uint64_t i = 0; i < n; i++) {
        (void)*(volatile uint32_t *)(uintptr_t)(RTOS_RAM_PA + (i % 4096u) * 4u);
    }
    guest_printf("hostile: abort-flood: %lu instruction aborts, %lu data aborts taken\n", (unsigned long)iabt,
                 (unsigned long)(abort_count - iabt));
}

/* The PMU and self-hosted debug are the guest's own (nothing traps), so it aims them at the hypervisor:
 * a breakpoint on the hypervisor's trap handler (target=, its address from the hypervisor's ELF) and a
 * watchpoint over the first 16 MiB of RAM (the hypervisor's code, data and stacks), both matching at EL2
 * too (HMC), and the cycle counter counting at EL2 (NSH), across count= HVCs. Debug exceptions target
 * EL1, which never takes them from EL2: the hypervisor runs its handler and touches its memory for every
 * HVC and takes nothing; the guest takes no exception either (PSTATE.D stays set at EL1). */
static void attack_pmu_debug(void)
{
    uint64_t target = guest_arg_u64("target", 0), n = guest_arg_u64("count", 1000);
    uint64_t undefs = undef_count, syncs = sync_count;
    GUEST_WRITE_SYSREG(oslar_el1, 0);
    GUEST_WRITE_SYSREG(mdscr_el1, MDSCR_MDE | MDSCR_KDE);
    GUEST_WRITE_SYSREG(dbgbvr0_el1, target);
    GUEST_WRITE_SYSREG(dbgbcr0_el1, DBGBCR_EL2_EL1_EL0);
    GUEST_WRITE_SYSREG(dbgwvr0_el1, WATCH_BASE);
    GUEST_WRITE_SYSREG(dbgwcr0_el1, DBGWCR_EL2_EL1_EL0_RW | ((uint64_t)WATCH_LOG2 << DBGWCR_MASK_SHIFT));
    GUEST_WRITE_SYSREG(pmccfiltr_el0, 1ull << 27); /* NSH: count at EL2 */
    GUEST_WRITE_SYSREG(pmcntenset_el0, 1ull << 31);
    GUEST_WRITE_SYSREG(pmcr_el0, PMCR_E | PMCR_C);
    __asm__ volatile("isb");
    uint64_t c0 = GUEST_READ_SYSREG(pmccntr_el0);
    uint64_t answered = 0;
    for (uint64_t i = 0; i < n; i++) {
        answered += guest_hvc(PSCI_VERSION, 0, 0, 0) > 0;
    }
    uint64_t c1 = GUEST_READ_SYSREG(pmccntr_el0);
    GUEST_WRITE_SYSREG(pmcr_el0, 0);
    GUEST_WRITE_SYSREG(dbgbcr0_el1, 0);
    GUEST_WRITE_SYSREG(dbgwcr0_el1, 0);
    GUEST_WRITE_SYSREG(mdscr_el1, 0);
    guest_printf("hostile: pmu-debug: %lu HVCs answered with a breakpoint at 0x%lx and a watchpoint over the "
                 "hypervisor, %lu refused, %lu exceptions taken, cycle counter moved %lu\n",
                 (unsigned long)answered, (unsigned long)target, (unsigned long)(undef_count - undefs),
                 (unsigned long)(sync_count - syncs), (unsigned long)(c1 - c0));
}

/* Data cache maintenance by set/way over every set and way of every level CLIDR_EL1 reports. */
static void attack_setway(void)
{
    uint64_t clidr = GUEST_READ_SYSREG(clidr_el1), ops = 0, before = undef_count;
    for (unsigned level = 0; level < 7; level++) {
        unsigned ctype = (unsigned)(clidr >> (3 * level)) & 7u;
        if (ctype < 2) {
            continue; /* no data or unified cache at this level */
        }
        GUEST_WRITE_SYSREG(csselr_el1, level << 1);
        __asm__ volatile("isb");
        uint64_t ccsidr = GUEST_READ_SYSREG(ccsidr_el1);
        unsigned line_shift = (unsigned)(ccsidr & 7u) + 4u;
        unsigned ways = (unsigned)((ccsidr >> 3) & 0x3ffu) + 1u;
        unsigned sets = (unsigned)((ccsidr >> 13) & 0x7fffu) + 1u;
        /* The way number sits in the top bits: 32 - log2(ways) (a direct-mapped cache has none). */
        unsigned way_shift = ways == 1 ? 0 : (unsigned)__builtin_clz(ways - 1u);
        for (unsigned w = 0; w < ways; w++) {
            for (unsigned s = 0; s < sets; s++) {
                uint64_t sw = ((uint64_t)w << way_shift) | ((uint64_t)s << line_shift) | (level << 1);
                switch (ops % 3u) {
                case 0:
                    __asm__ volatile("dc isw, %0" : : "r"(sw) : "memory");
                    break;
                case 1:
                    __asm__ volatile("dc csw, %0" : : "r"(sw) : "memory");
                    break;
                default:
                    __asm__ volatile("dc cisw, %0" : : "r"(sw) : "memory");
                    break;
                }
                ops++;
            }
        }
    }
    guest_printf("hostile: setway: %lu operations, %lu refused\n", (unsigned long)ops,
                 (unsigned long)(undef_count - before));
}

/* Every PSCI function (and unknown IDs) with random arguments, through HVC and SMC. Functions that
 * would end the run (OFF, RESET, CPU_OFF, SUSPEND) are left out; their own attacks cover them. */
static void attack_hvc_fuzz(void)
{
    uint64_t n = guest_arg_u64("count", 20000), answered = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = guest_random();
        uint64_t fn;
        switch (r % 4u) {
        case 0:
            fn = 0x84000000u + (r >> 8) % 0x20u; /* PSCI SMC32 range */
            break;
        case 1:
            fn = 0xc4000000u + (r >> 8) % 0x20u; /* PSCI SMC64 range */
            break;
        case 2:
            fn = (r >> 8) & 0xffffffffu; /* anything 32-bit */
            break;
        default:
            fn = r >> 2; /* anything 64-bit */
            break;
        }
        uint64_t id = fn & 0xffffffffu;
        if (id == PSCI_SYSTEM_OFF || id == PSCI_SYSTEM_RESET || id == PSCI_CPU_OFF || id == 0x84000001u ||
            id == 0xc4000001u || id == 0x84000012u || id == 0xc4000012u || id == 0x8400000eu ||
            id == 0xc400000eu || id == 0x84000015u || id == 0xc4000015u) {
            continue; /* OFF, RESET, CPU_OFF, CPU_SUSPEND, SYSTEM_RESET2, SYSTEM_SUSPEND, MEM_PROTECT */
        }
        int64_t ret = (r & 0x80u) ? guest_hvc(fn, guest_random(), guest_random(), guest_random())
                                  : guest_smc(fn, guest_random(), guest_random(), guest_random());
        answered += ret != 0x7fffffffffffffffll;
    }
    guest_printf("hostile: hvc-fuzz: %lu calls answered\n", (unsigned long)answered);
}

/* GIC CPU-interface misuse: SGIs to every target list and affinity, broadcast, random priorities,
 * binary points, group enables, EOIs and deactivations of interrupts never taken. */
static void attack_gic_sysreg(void)
{
    if (gic2) {
        guest_puts(
            "hostile: gic-sysreg: not a GICv3 (a GICv2 has no CPU-interface system registers: gic-sgir)\n");
        return;
    }
    uint64_t n = guest_arg_u64("count", 20000);
    irqs_off();
    cpu_if_on();
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = guest_random();
        switch (i % 8u) {
        case 0:
        case 1:
            GUEST_WRITE_SYSREG(S3_0_C12_C11_5, r); /* ICC_SGI1R_EL1: any target, any IRM */
            break;
        case 2:
            GUEST_WRITE_SYSREG(S3_0_C12_C11_6, r); /* ICC_ASGI1R_EL1 */
            break;
        case 3:
            GUEST_WRITE_SYSREG(S3_0_C12_C11_7, r); /* ICC_SGI0R_EL1 */
            break;
        case 4:
            GUEST_WRITE_SYSREG(S3_0_C4_C6_0, r & 0xffu);     /* PMR */
            GUEST_WRITE_SYSREG(S3_0_C12_C12_3, r >> 8 & 7u); /* BPR1 */
            break;
        case 5:
            GUEST_WRITE_SYSREG(S3_0_C12_C12_1, r & 0x3ffu); /* EOIR1 of something never taken */
            break;
        case 6:
            GUEST_WRITE_SYSREG(S3_0_C12_C11_1, r & 0x3ffu); /* DIR */
            break;
        default:
            GUEST_WRITE_SYSREG(S3_0_C12_C12_7, r & 1u); /* IGRPEN1 */
            GUEST_WRITE_SYSREG(S3_0_C12_C12_4, r & 3u); /* CTLR: EOImode, CBPR */
            break;
        }
        if ((i & 63u) == 0) {
            irqs_on(); /* take whatever the SGIs made pending */
            irqs_off();
        }
    }
    cpu_if_on();
    irqs_on();
    spin_ms(5);
    irqs_off();
    guest_printf("hostile: gic-sysreg: %lu writes, %lu interrupts taken\n", (unsigned long)n,
                 (unsigned long)irq_count);
}

/* GICv2 distributor misuse, the counterpart of gic-sysreg (a GICv2 has no CPU-interface system
 * registers: its SGIs, targets and priorities are distributor registers, which trap). Assumes a
 * partition of one CPU (tests/system/configs/hostile*.toml).
 *  1. Every SPI's GICD_ITARGETSR byte written with every CPU interface but this CPU's (the rtos's
 *     among them), every priority byte and every enable, group, pending, active and configuration word
 *     written with random values (the banked SGI/PPI words and the read-only ITARGETSR0..7 too), then
 *     `count` random writes of GICD_SGIR (every filter, target list and INTID), GICD_CPENDSGIR /
 *     GICD_SPENDSGIR (bytes and words), ITARGETSR, priorities, enables, GICD_CTLR and the CPU interface
 *     it is given (PMR, BPR, CTLR, EOIR and DIR of interrupts never taken), taking what they make
 *     pending every 64 writes. Then every SPI's target is read back: none may name another CPU, and the
 *     distributor's identification (CTLR, TYPER, IIDR) must not have moved.
 *  2. With a clean CPU interface and IRQs unmasked, `count` / 8 GICD_SGIR writes with random filters
 *     and target lists and GICD_SPENDSGIR writes (SGIs 0..12: 13 and 15 are the hypervisor's on this
 *     CPU, 14 the V-Bus doorbell's): each SGI that names this CPU must be taken exactly once, and no
 *     other; and an SGI set pending (IRQs masked) then cleared through GICD_CPENDSGIR must read back
 *     set, then clear, and never be taken. */
static bool sgir_names_self(uint32_t sgir, uint8_t self)
{
    uint32_t filter = (sgir >> GICD_SGIR_FILTER_SHIFT) & GICD_SGIR_FILTER_MASK;
    uint32_t list = (sgir >> GICD_SGIR_TARGETS_SHIFT) & GICD_SGIR_TARGETS_MASK;
    return filter == GICD_SGIR_FILTER_SELF || (filter == GICD_SGIR_FILTER_LIST && (list & self) != 0u);
}

/* Waits (bounded) until `want` SGIs were taken since `from`, then a little longer for any extra. */
static void sgis_settle(uint64_t from, uint64_t want)
{
    for (unsigned i = 0; i < 10000u && sgi_count - from < want; i++) {
        __asm__ volatile("isb");
    }
    for (unsigned i = 0; i < 32u; i++) {
        __asm__ volatile("isb");
    }
}

static void attack_gic_sgir(void)
{
    if (!gic2) {
        guest_puts("hostile: gic-sgir: not a GICv2 (this attack is GICD_SGIR's)\n");
        return;
    }
    uint64_t n = guest_arg_u64("count", 20000);
    uint32_t id0[3] = {gicd_r32(GICD_CTLR), gicd_r32(GICD_TYPER), gicd_r32(GICD_IIDR)};
    unsigned lines = ((id0[1] & GICD_TYPER_LINES) + 1u) * 32u;
    uint8_t self = gicd_r8(GICD_ITARGETSR); /* this CPU's interface (banked, read-only) */
    uint64_t sgir = 0, pend = 0, targets = 0, prio = 0, cpuif = 0;
    irqs_off();
    cpu_if_on();
    /* 1: every SPI's target, priority and bit registers. */
    for (unsigned i = GIC_SPI_BASE; i < lines; i++) {
        gicd_w8(GICD_ITARGETSR + i, (uint8_t)~self);
        targets++;
    }
    for (unsigned i = 0; i < lines; i++) {
        gicd_w8(GICD_IPRIORITYR + i, (uint8_t)guest_random());
        prio++;
    }
    for (unsigned w = 0; w < lines / 32u; w++) {
        for (uint64_t reg = GICD_IGROUPR; reg < GICD_IPRIORITYR; reg += GICD_BITREG_SPAN) {
            gicd_w32(reg + w * 4u, (uint32_t)guest_random());
            prio++;
        }
        gicd_w32(GICD_ICFGR + w * 8u, (uint32_t)guest_random());
        gicd_w32(GICD_ICFGR + w * 8u + 4u, (uint32_t)guest_random());
        prio += 2;
    }
    for (unsigned w = 0; w < GIC_SPI_BASE / 4u; w++) {
        gicd_w32(GICD_ITARGETSR + w * 4u, (uint32_t)guest_random()); /* read-only */
        targets++;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = guest_random();
        switch (i % 8u) {
        case 0:
        case 1:
            gicd_w32(GICD_SGIR, (uint32_t)(r >> 8)); /* any filter (3 is reserved), targets, INTID */
            sgir++;
            break;
        case 2: {
            uint64_t off = GICD_CPENDSGIR + (r >> 8) % (2u * GICD_SGIR_SPAN);
            if ((r >> 16) & 1u) {
                gicd_w8(off, (uint8_t)(r >> 24));
            } else {
                gicd_w32(off & ~3ull, (uint32_t)(r >> 24));
            }
            pend++;
            break;
        }
        case 3:
            gicd_w8(GICD_ITARGETSR + GIC_SPI_BASE + (r >> 8) % (lines - GIC_SPI_BASE),
                    (r >> 20) & 1u ? (uint8_t)~self : (uint8_t)(r >> 24));
            targets++;
            break;
        case 4:
            gicd_w8(GICD_IPRIORITYR + (r >> 8) % lines, (uint8_t)(r >> 24));
            prio++;
            break;
        case 5: {
            uint64_t reg = GICD_IGROUPR + ((r >> 8) % 7u) * GICD_BITREG_SPAN;
            gicd_w32(reg + ((r >> 12) % (lines / 32u)) * 4u, (uint32_t)(r >> 24));
            prio++;
            break;
        }
        case 6:
            if ((r >> 8) & 1u) {
                gicd_w32(GICD_ICFGR + ((r >> 12) % (lines / 16u)) * 4u, (uint32_t)(r >> 24));
            } else {
                gicd_w32(GICD_CTLR, (uint32_t)(r >> 24)); /* not the partition's */
            }
            prio++;
            break;
        default:
            switch ((r >> 8) % 5u) {
            case 0:
                gicc_w32(GICC_PMR, (uint32_t)(r >> 16) & 0xffu);
                break;
            case 1:
                gicc_w32(GICC_BPR, (uint32_t)(r >> 16) & 7u);
                break;
            case 2:
                gicc_w32(GICC_CTLR, (uint32_t)(r >> 16) & 0x21fu); /* enables, FIQEn, CBPR, EOImode */
                break;
            case 3:
                gicc_w32(GICC_EOIR, (uint32_t)(r >> 16) & 0x1fffu); /* never taken */
                break;
            default:
                gicc_w32(GICC_DIR, (uint32_t)(r >> 16) & 0x1fffu);
                break;
            }
            cpuif++;
            break;
        }
        if ((i & 63u) == 0) {
            irqs_on(); /* take whatever the writes made pending */
            irqs_off();
        }
    }
    uint64_t mine = 0, foreign = 0, banked_wrong = 0;
    for (unsigned i = GIC_SPI_BASE; i < lines; i++) {
        uint8_t t = gicd_r8(GICD_ITARGETSR + i);
        mine += t == self;
        foreign += (t & (uint8_t)~self) != 0;
    }
    for (unsigned i = 0; i < GIC_SPI_BASE; i++) {
        banked_wrong += gicd_r8(GICD_ITARGETSR + i) != self;
    }
    uint32_t id1[3] = {gicd_r32(GICD_CTLR), gicd_r32(GICD_TYPER), gicd_r32(GICD_IIDR)};
    unsigned id_moved = 0;
    for (unsigned i = 0; i < 3u; i++) {
        id_moved += id0[i] != id1[i];
    }
    guest_printf(
        "hostile: gic-sgir: %lu writes: %lu SGIR, %lu SGI pending, %lu ITARGETSR, %lu priority, "
        "enable, group, pending, active and configuration, %lu CPU interface; %lu interrupts taken\n",
        (unsigned long)(sgir + pend + targets + prio + cpuif), (unsigned long)sgir, (unsigned long)pend,
        (unsigned long)targets, (unsigned long)prio, (unsigned long)cpuif, (unsigned long)irq_count);
    guest_printf(
        "hostile: gic-sgir: SPI targets: %lu name this CPU (0x%x) alone, %lu another CPU; %lu banked "
        "targets not this CPU's; %u identification registers moved\n",
        (unsigned long)mine, (unsigned)self, (unsigned long)foreign, (unsigned long)banked_wrong, id_moved);

    /* Back to a clean state: private interrupts and every SPI disabled, nothing pending or active, the
     * CPU interface open (a DIR for what an EOImode 1 left active), then whatever is left taken. */
    for (unsigned w = 0; w < lines / 32u; w++) {
        gicd_w32(GICD_ICENABLER + w * 4u, 0xffffffffu);
        gicd_w32(GICD_ICPENDR + w * 4u, 0xffffffffu);
        gicd_w32(GICD_ICACTIVER + w * 4u, 0xffffffffu);
    }
    for (unsigned i = 0; i < GIC_SGI_COUNT; i++) {
        gicd_w8(GICD_CPENDSGIR + i, 0xffu);
    }
    gicc_w32(GICC_CTLR, GICC_CTLR_ENABLE_GRP0 | GICC_CTLR_EOIMODE);
    for (unsigned i = 0; i < GIC_SPI_BASE; i++) {
        gicc_w32(GICC_DIR, i);
    }
    gicc_w32(GICC_BPR, 0);
    cpu_if_on();
    irqs_on();
    spin_ms(2);
    irqs_off();

    /* 2: exact delivery. */
    for (unsigned i = 0; i < GIC_SGI_COUNT; i++) {
        gicd_w8(GICD_IPRIORITYR + i, 0x80u);
    }
    gicd_w32(GICD_ISENABLER, (1u << GIC_SGI_COUNT) - 1u);
    uint64_t m = n / 8u, written = 0, expected = 0, from = sgi_count;
    irqs_on();
    for (uint64_t i = 0; i < m; i++) {
        uint64_t r = guest_random();
        unsigned sgi = (unsigned)((r >> 8) % 13u);
        uint64_t before = sgi_count;
        bool hit;
        if (i % 2u == 0) {
            uint32_t v = ((uint32_t)(r >> 16) & ~GICD_SGIR_INTID_MASK) | sgi;
            hit = sgir_names_self(v, self);
            gicd_w32(GICD_SGIR, v);
        } else {
            uint8_t sources = (uint8_t)(r >> 16);
            hit = sources != 0;
            gicd_w8(GICD_SPENDSGIR + sgi, sources);
        }
        written++;
        expected += hit;
        sgis_settle(before, hit ? 1u : 0u);
    }
    sgis_settle(from, expected);
    irqs_off();
    uint64_t taken = sgi_count - from;
    uint64_t cleared = 0, read_wrong = 0, before = sgi_count;
    for (uint64_t i = 0; i < m / 4u; i++) {
        uint64_t r = guest_random();
        unsigned sgi = (unsigned)((r >> 8) % 13u);
        gicd_w8(GICD_SPENDSGIR + sgi, (uint8_t)((r >> 16) | 1u));
        read_wrong += gicd_r8(GICD_SPENDSGIR + sgi) == 0;
        gicd_w8(GICD_CPENDSGIR + sgi, (uint8_t)((r >> 24) | 0x80u));
        read_wrong += gicd_r8(GICD_SPENDSGIR + sgi) != 0 || gicd_r8(GICD_CPENDSGIR + sgi) != 0;
        cleared++;
    }
    irqs_on();
    spin_ms(1);
    irqs_off();
    guest_printf(
        "hostile: gic-sgir: SGIs to itself: %lu writes, %lu expected, %lu taken; %lu set and cleared "
        "pending, %lu read wrong, %lu taken\n",
        (unsigned long)written, (unsigned long)expected, (unsigned long)taken, (unsigned long)cleared,
        (unsigned long)read_wrong, (unsigned long)(sgi_count - before));
}

/* An interrupt storm at the top priority for `ms` milliseconds: the virtual timer always firing and
 * re-armed at once from its handler (which masks and EOIs it), plus SGIs to itself. */
static void attack_irq_storm(void)
{
    uint64_t ms = guest_arg_u64("ms", 3000);
    ppi_enable(BOARD_INTID_VIRT_TIMER, 0x00);
    cpu_if_on();
    uint64_t end = guest_counter() + ms * guest_counter_hz() / 1000u, sgis = 0;
    irqs_on();
    while (guest_counter() < end) {
        GUEST_WRITE_SYSREG(cntv_cval_el0, 0);
        GUEST_WRITE_SYSREG(cntv_ctl_el0, CNT_CTL_ENABLE);
        sgi_self(1); /* GICv2: a trapped GICD_SGIR write */
        sgis++;
        __asm__ volatile("isb");
    }
    irqs_off();
    guest_printf("hostile: irq-storm: %lu interrupts taken, %lu SGIs sent in %lu ms\n",
                 (unsigned long)irq_count, (unsigned long)sgis, (unsigned long)ms);
}

/* Not an attack but the reference for the others: `ms` milliseconds of pure computation on this CPU
 * (interrupts masked with masked=1), with no trap to the hypervisor at all. Whatever it costs the rtos
 * is the emulator's (QEMU runs both vCPUs in turn in icount mode), not the hypervisor's. */
static void attack_spin(void)
{
    uint64_t ms = guest_arg_u64("ms", 3000);
    if (guest_arg_u64("masked", 1) != 0) {
        irqs_off();
    }
    spin_ms(ms);
    guest_printf("hostile: spin: %lu ms\n", (unsigned long)ms);
}

/* Prints as fast as the emulated UART takes characters, for `ms` milliseconds. */
static void attack_console_flood(void)
{
    uint64_t ms = guest_arg_u64("ms", 3000), lines = 0;
    uint64_t end = guest_counter() + ms * guest_counter_hz() / 1000u;
    while (guest_counter() < end) {
        guest_puts("hostile: flood flood flood flood flood flood flood flood flood flood flood flood\n");
        lines++;
    }
    guest_printf("hostile: console-flood: %lu lines in %lu ms\n", (unsigned long)lines, (unsigned long)ms);
}

/* One access of `size` bytes at `addr` (read or write of `val`); aborts are counted by the handler. */
static void access(uintptr_t addr, unsigned size, bool write, uint64_t val)
{
    switch (size * 2u + write) {
    case 2:
        (void)*(volatile uint8_t *)addr;
        break;
    case 3:
        *(volatile uint8_t *)addr = (uint8_t)val;
        break;
    case 4:
        (void)*(volatile uint16_t *)addr;
        break;
    case 5:
        *(volatile uint16_t *)addr = (uint16_t)val;
        break;
    case 8:
        (void)*(volatile uint32_t *)addr;
        break;
    case 9:
        *(volatile uint32_t *)addr = (uint32_t)val;
        break;
    case 16:
        (void)*(volatile uint64_t *)addr;
        break;
    default:
        *(volatile uint64_t *)addr = val;
        break;
    }
}

/* Every emulated register window (distributor, every redistributor frame the region could hold,
 * UART) with every access size, aligned and not, including accesses that cross a page. Writes use
 * random values except to registers that would only disable this partition's own console. On a GICv2:
 * the distributor's 4 KiB, the CPU interface the partition is given (the virtual one, mapped: its own
 * state only) and the redistributor window a GICv2 does not have (nothing there: every access is
 * refused). Each window's line counts its accesses, its aborts, and among them those the hypervisor
 * refused (a synchronous external abort) and the alignment faults taken at EL1, and the accesses that
 * reach past its end (into the next page: where that page is not the partition's and the window's is
 * mapped, as the CPU interface is on a GICv2, stage 2 refuses them). */
static void attack_mmio(void)
{
    static const struct {
        uintptr_t base, size;
    } windows[] = {
        {BOARD_GICD_BASE, 0x10000u},
        {BOARD_GICR_BASE, 8u * BOARD_GICR_STRIDE},
        {BOARD_UART_BASE, BOARD_UART_SIZE},
        {BOARD_GICC_BASE, GICC_SIZE}, /* GICv2 only */
    };
    static const char names[][8] = {"gicd", "gicr", "uart", "gicc"};
    uint64_t n = guest_arg_u64("count", 30000), done = 0;
    uint64_t aborts0 = abort_count;
    unsigned nwin = gic2 ? 4u : 3u;
    for (unsigned w = 0; w < nwin; w++) {
        uintptr_t size = gic2 && w == 0 ? GICV2_GICD_SIZE : windows[w].size;
        uint64_t at0 = done, ab0 = abort_count, ref0 = refused_count, al0 = align_count, past = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t r = guest_random();
            unsigned width = 1u << (r & 3u);
            bool write = (r >> 2) & 1u;
            uintptr_t off = (uintptr_t)((r >> 3) % size);
            if ((r >> 40) % 4u == 0) {
                off = (off | 0xfffu) - (r >> 50) % 8u; /* around a page end */
            } else if ((r >> 40) % 4u == 1) {
                off &= ~(uintptr_t)(width - 1u); /* naturally aligned */
            }
            if (w == 2 && write && (off & ~3u) == 0x30u) {
                continue; /* UARTCR: would switch off this partition's own output */
            }
            access(windows[w].base + off, width, write, guest_random());
            done++;
            past += off + width > size;
        }
        guest_printf(
            "hostile: mmio window %s 0x%lx+0x%lx: %lu accesses (%lu reaching past its end), %lu aborts, "
            "%lu refused, %lu alignment faults\n",
            names[w], (unsigned long)windows[w].base, (unsigned long)size, (unsigned long)(done - at0),
            (unsigned long)past, (unsigned long)(abort_count - ab0), (unsigned long)(refused_count - ref0),
            (unsigned long)(align_count - al0));
    }
    guest_printf("hostile: mmio: %lu accesses, %lu aborts\n", (unsigned long)done,
                 (unsigned long)(abort_count - aborts0));
}

/* ---------------------------------------------------------------- the PL031's level interrupt */

/* How the RTC's handler ends an interrupt: clear the device then EOI (what a driver does); EOI then
 * clear (the order that leaves a level line asserted after the EOI); or, for a line that really is still
 * asserted, EOI without clearing on the first entry of an event and clear (then EOI) on the second. */
enum rtc_order { RTC_CLEAR_FIRST, RTC_EOI_FIRST, RTC_HELD };

static volatile enum rtc_order rtc_order;
/* Handler runs that found the device asserted / not asserted (spurious); events cleared; entries of the
 * current event. */
static volatile uint64_t rtc_asserted, rtc_spurious, rtc_cleared, rtc_entries;

static volatile uint32_t *rtc_reg(unsigned off)
{
    return (volatile uint32_t *)(BOARD_RTC_BASE + off);
}

static bool rtc_line(void)
{
    return (*rtc_reg(PL031_MIS) & PL031_INT) != 0;
}

static void rtc_clear(void)
{
    *rtc_reg(PL031_ICR) = PL031_INT;
    __asm__ volatile("dsb sy" ::: "memory"); /* the device has seen it before the handler goes on */
}

static void eoi(uint64_t iar)
{
    gic_eoi(iar); /* EOImode 0: also deactivates */
    /* The context synchronisation lets a level still asserted be taken again at EL2 here, before the
     * device is cleared: the moment a real interrupt controller would also see the line. */
    __asm__ volatile("isb" ::: "memory");
}

static void rtc_irq(uint64_t iar)
{
    if (!rtc_line()) {
        rtc_spurious++;
        eoi(iar);
        return;
    }
    rtc_asserted++;
    rtc_entries++;
    switch (rtc_order) {
    case RTC_CLEAR_FIRST:
        rtc_clear();
        rtc_cleared++;
        eoi(iar);
        break;
    case RTC_EOI_FIRST:
        eoi(iar);
        for (volatile unsigned i = 0; i < 64u; i++) {
        }
        rtc_clear();
        rtc_cleared++;
        break;
    default:
        if (rtc_entries < 2) {
            eoi(iar); /* still asserted: it must come again */
        } else {
            rtc_clear();
            rtc_cleared++;
            eoi(iar);
        }
        break;
    }
}

/* Raises the alarm with IRQs unmasked: a match value equal to the current count fires at once (QEMU's
 * PL031 then sets RIS), and the handler may already have run when RIS is read. The count may tick
 * between the read and the write, which leaves the alarm 2^32 s away: retry. */
static bool rtc_raise(void)
{
    for (unsigned i = 0; i < 4u; i++) {
        *rtc_reg(PL031_MR) = *rtc_reg(PL031_DR);
        __asm__ volatile("dsb sy" ::: "memory");
        if ((*rtc_reg(PL031_RIS) & PL031_INT) || rtc_entries != 0) {
            return true;
        }
    }
    return false;
}

/* This CPU as an SPI's routing names it: GICv3, its affinity (GICD_IROUTER's layout, Aff0..Aff2);
 * GICv2, its CPU interface's bit (GICD_ITARGETSR0..7 are banked and read as the reading CPU's own). */
static uint64_t route_of_this_cpu(void)
{
    return gic2 ? gicd_r8(GICD_ITARGETSR) : GUEST_READ_SYSREG(mpidr_el1) & MPIDR_AFF012_MASK;
}

/* The RTC's SPI as a driver sets it up, without touching its routing (GICD_IROUTER, or GICD_ITARGETSR
 * on a GICv2): priority, level, enabled. Returns the routing the partition found (the hypervisor places
 * it at set-up) and whether the SPI was already enabled. */
static uint64_t rtc_spi_on(bool *was_enabled)
{
    unsigned n = BOARD_RTC_INTID;
    uint64_t route =
        gic2 ? gicd_r8(GICD_ITARGETSR + n) : *(volatile uint64_t *)(BOARD_GICD_BASE + GICD_IROUTER + n * 8u);
    *was_enabled = (gicd_r32(GICD_ISENABLER + n / 32u * 4u) >> (n % 32u)) & 1u;
    gicd_w8(GICD_IPRIORITYR + n, 0xa0u);
    uint64_t cfg = GICD_ICFGR + n / 16u * 4u;
    gicd_w32(cfg, gicd_r32(cfg) & ~(3u << (2u * (n % 16u)))); /* level-sensitive */
    *rtc_reg(PL031_IMSC) = 0;
    rtc_clear();
    gicd_w32(GICD_ISENABLER + n / 32u * 4u, 1u << (n % 32u));
    *rtc_reg(PL031_IMSC) = PL031_INT;
    cpu_if_on();
    return route;
}

/* Raises `events` alarms one after the other with interrupts unmasked, each handled in `order`; after
 * each, waits `settle_us` for whatever else the interrupt controller delivers. Returns the alarms that
 * were never cleared within 100 ms (lost). */
static uint64_t rtc_run(enum rtc_order order, uint64_t events, uint64_t settle_us, uint64_t *raised)
{
    uint64_t hz = guest_counter_hz(), lost = 0;
    rtc_order = order;
    *raised = 0;
    irqs_on();
    for (uint64_t e = 0; e < events; e++) {
        uint64_t cleared = rtc_cleared;
        rtc_entries = 0;
        if (!rtc_raise()) {
            continue;
        }
        (*raised)++;
        uint64_t end = guest_counter() + hz / 10u;
        while (rtc_cleared == cleared && guest_counter() < end) {
        }
        if (rtc_cleared == cleared) {
            lost++;
            irqs_off();
            rtc_clear();
            irqs_on();
        }
        end = guest_counter() + settle_us * hz / 1000000u;
        while (guest_counter() < end) {
        }
    }
    irqs_off();
    return lost;
}

/* Item 15: the RTC assigned to this partition, its SPI enabled by the guest without any routing of its
 * own, must interrupt this CPU. At the end the alarm is left asserted and the partition powers off: the
 * hypervisor disables the SPI, so nothing of it reaches the other CPUs or keeps this one at EL2. */
static void attack_rtc_route(void)
{
    bool was_enabled;
    uint64_t mine = route_of_this_cpu();
    uint64_t route = rtc_spi_on(&was_enabled);
    uint64_t raised, lost = rtc_run(RTC_CLEAR_FIRST, guest_arg_u64("count", 20), 200, &raised);
    guest_printf("hostile: rtc-route: routed to 0x%lx (this CPU 0x%lx), enabled at boot %u, %lu raised, %lu "
                 "taken, %lu lost, %lu spurious\n",
                 (unsigned long)route, (unsigned long)mine, (unsigned)was_enabled, (unsigned long)raised,
                 (unsigned long)rtc_asserted, (unsigned long)lost, (unsigned long)rtc_spurious);
    irqs_off();
    rtc_entries = 0;
    bool up = rtc_raise();
    guest_printf("hostile: rtc-route: alarm left %s; powering off\n",
                 up && rtc_line() ? "asserted" : "clear");
}

/* Item 16: a level interrupt ended (EOI) before its device is cleared. On hardware the pending state
 * follows the line, so the cleared device interrupts no more; a hypervisor that latched the line while
 * it was still up would deliver one spurious interrupt per event. `order=held` is the control: a line
 * really still asserted after the EOI must be delivered again (two asserted runs per event). */
static void attack_rtc_level(void)
{
    char order[16] = "eoi-first";
    (void)guest_arg("order", order, sizeof(order));
    enum rtc_order o = guest_strcmp(order, "held") == 0          ? RTC_HELD
                       : guest_strcmp(order, "clear-first") == 0 ? RTC_CLEAR_FIRST
                                                                 : RTC_EOI_FIRST;
    bool was_enabled;
    (void)rtc_spi_on(&was_enabled);
    uint64_t raised, lost = rtc_run(o, guest_arg_u64("count", 200), guest_arg_u64("settle_us", 500), &raised);
    guest_printf(
        "hostile: rtc-level %s: %lu raised, %lu handler runs, %lu asserted, %lu spurious, %lu lost\n", order,
        (unsigned long)raised, (unsigned long)(rtc_asserted + rtc_spurious), (unsigned long)rtc_asserted,
        (unsigned long)rtc_spurious, (unsigned long)lost);
}

void guest_main(void)
{
    char attack[32];
    if (!guest_arg("attack", attack, sizeof(attack))) {
        guest_puts("hostile: no attack= in the boot arguments\n");
        return;
    }
    gic2 = !cpu_has_gicv3_sysregs();
    guest_printf("hostile: attack %s (GICv%u)\n", attack, gic2 ? 2u : 3u);
    if (guest_strcmp(attack, "reset") == 0) {
        attack_reset();
    } else if (guest_strcmp(attack, "state") == 0) {
        attack_state();
    } else if (guest_strcmp(attack, "poweroff-timer") == 0) {
        attack_poweroff_timer();
    } else if (guest_strcmp(attack, "abort-flood") == 0) {
        attack_abort_flood();
    } else if (guest_strcmp(attack, "pmu-debug") == 0) {
        attack_pmu_debug();
    } else if (guest_strcmp(attack, "setway") == 0) {
        attack_setway();
    } else if (guest_strcmp(attack, "hvc-fuzz") == 0) {
        attack_hvc_fuzz();
    } else if (guest_strcmp(attack, "gic-sysreg") == 0) {
        attack_gic_sysreg();
    } else if (guest_strcmp(attack, "gic-sgir") == 0) {
        attack_gic_sgir();
    } else if (guest_strcmp(attack, "irq-storm") == 0) {
        attack_irq_storm();
    } else if (guest_strcmp(attack, "console-flood") == 0) {
        attack_console_flood();
    } else if (guest_strcmp(attack, "spin") == 0) {
        attack_spin();
    } else if (guest_strcmp(attack, "mmio") == 0) {
        attack_mmio();
    } else if (guest_strcmp(attack, "rtc-route") == 0) {
        attack_rtc_route();
    } else if (guest_strcmp(attack, "rtc-level") == 0) {
        attack_rtc_level();
    } else {
        guest_printf("hostile: unknown attack %s\n", attack);
        return;
    }
    guest_puts("hostile: done; powering off\n");
    guest_power_off(); /* the hypervisor reports what it refused and emulated when a partition stops */
}
