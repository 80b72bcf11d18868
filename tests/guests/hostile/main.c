/*
 * A malicious partition: booted as the Linux partition beside the rtos, it attacks the hypervisor in
 * the way its boot arguments name (attack=NAME). Every attack prints what it did in figures it
 * computed, so a test can tell "attacked and survived" from "did not attack". tests/system/
 * test_hostile.py runs them; docs/security.md lists them with their outcome.
 */
#include "arm64/gicv3.h"
#include "arm64/pl031.h"
#include "arm64/psci.h"
#include "arm64/sysreg.h"
#include "board.h"
#include "guest.h"

/* An address no partition has: QEMU virt's flash at 0 is never mapped at stage 2. */
#define UNMAPPED_IPA 0x1000u
/* The rtos's RAM as physical (= Linux's IPA) address: below the Linux partition's RAM. */
#define RTOS_RAM_PA 0x48000000u

/* Distinct values written before a reset and looked for after it. */
#define MARK 0x5eedf00d0badcafeull

static volatile uint64_t sync_count, undef_count, abort_count, irq_count;
static volatile uint32_t last_intid;

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
    if (ec == 0x25u) { /* data abort injected by the hypervisor: skip the access */
        abort_count++;
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
    uint64_t iar = GUEST_READ_SYSREG(S3_0_C12_C12_0); /* ICC_IAR1_EL1 */
    uint32_t intid = (uint32_t)(iar & GIC_INTID_MASK);
    if (intid >= GIC_INTID_SPECIAL) {
        return;
    }
    irq_count++;
    last_intid = intid;
    if (intid == BOARD_RTC_INTID) {
        rtc_irq(iar); /* ends the interrupt itself, in the order its test asks for */
        return;
    }
    if (intid == BOARD_INTID_VIRT_TIMER) {
        GUEST_WRITE_SYSREG(cntv_ctl_el0, CNT_CTL_ENABLE | CNT_CTL_IMASK); /* the line drops */
    }
    GUEST_WRITE_SYSREG(S3_0_C12_C12_1, iar); /* ICC_EOIR1_EL1 */
}

/* ---------------------------------------------------------------- GIC helpers */

static void ppi_enable(unsigned intid, uint8_t prio)
{
    volatile uint32_t *sgi = (volatile uint32_t *)(guest_gicr() + GICR_SGI_OFFSET);
    ((volatile uint8_t *)sgi)[GICR_IPRIORITYR0 + intid] = prio;
    sgi[GICR_ISENABLER0 / 4] = 1u << intid;
}

static void cpu_if_on(void)
{
    GUEST_WRITE_SYSREG(S3_0_C4_C6_0, 0xffu); /* ICC_PMR_EL1: all priorities */
    GUEST_WRITE_SYSREG(S3_0_C12_C12_7, 1u);  /* ICC_IGRPEN1_EL1 */
    __asm__ volatile("isb");
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
    expect_clear("ICC_PMR_EL1", GUEST_READ_SYSREG(S3_0_C4_C6_0), 0xf0u);
    expect_clear("ICC_IGRPEN1_EL1", GUEST_READ_SYSREG(S3_0_C12_C12_7), 1u);
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
    /* ICC_RPR_EL1: an interrupt left active before the reset would still hold the running priority. */
    expect_clear("ICC_RPR_EL1 (active interrupt)", GUEST_READ_SYSREG(S3_0_C12_C11_3) != 0xffu, 1u);
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
    for (unsigned i = 0; i < 1000000 && (iar & GIC_INTID_MASK) >= GIC_INTID_SPECIAL; i++) {
        iar = GUEST_READ_SYSREG(S3_0_C12_C12_0); /* acknowledge: active from now on */
    }
    GUEST_WRITE_SYSREG(S3_0_C4_C6_0, 0xf0u);
    guest_printf("hostile: acknowledged INTID %lu, left active; resetting\n",
                 (unsigned long)(iar & GIC_INTID_MASK));
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
        uint64_t self = GUEST_READ_SYSREG(mpidr_el1) & 0xffu;
        GUEST_WRITE_SYSREG(S3_0_C12_C11_5, (1ull << self) | (1ull << 24)); /* SGI 1 to itself */
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
 * random values except to registers that would only disable this partition's own console. */
static void attack_mmio(void)
{
    static const struct {
        uintptr_t base, size;
    } windows[] = {
        {BOARD_GICD_BASE, 0x10000u},
        {BOARD_GICR_BASE, 8u * BOARD_GICR_STRIDE},
        {BOARD_UART_BASE, BOARD_UART_SIZE},
    };
    uint64_t n = guest_arg_u64("count", 30000), done = 0;
    uint64_t aborts0 = abort_count;
    for (unsigned w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
        for (uint64_t i = 0; i < n; i++) {
            uint64_t r = guest_random();
            unsigned size = 1u << (r & 3u);
            bool write = (r >> 2) & 1u;
            uintptr_t off = (uintptr_t)((r >> 3) % windows[w].size);
            if ((r >> 40) % 4u == 0) {
                off = (off | 0xfffu) - (r >> 50) % 8u; /* around a page end */
            } else if ((r >> 40) % 4u == 1) {
                off &= ~(uintptr_t)(size - 1u); /* naturally aligned */
            }
            if (w == 2 && write && (off & ~3u) == 0x30u) {
                continue; /* UARTCR: would switch off this partition's own output */
            }
            access(windows[w].base + off, size, write, guest_random());
            done++;
        }
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
    GUEST_WRITE_SYSREG(S3_0_C12_C12_1, iar); /* ICC_EOIR1_EL1 (EOImode 0: also deactivates) */
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

static volatile uint32_t *gicd32(uint64_t off)
{
    return (volatile uint32_t *)(BOARD_GICD_BASE + off);
}

/* The RTC's SPI as a driver sets it up, without touching its routing (GICD_IROUTER): priority, level,
 * enabled. Returns the routing the partition found (the hypervisor places it at set-up) and whether
 * the SPI was already enabled. */
static uint64_t rtc_spi_on(bool *was_enabled)
{
    unsigned n = BOARD_RTC_INTID;
    uint64_t route = *(volatile uint64_t *)(BOARD_GICD_BASE + GICD_IROUTER + n * 8u);
    *was_enabled = (*gicd32(GICD_ISENABLER + n / 32u * 4u) >> (n % 32u)) & 1u;
    ((volatile uint8_t *)BOARD_GICD_BASE)[GICD_IPRIORITYR + n] = 0xa0u;
    volatile uint32_t *cfg = gicd32(GICD_ICFGR + n / 16u * 4u);
    *cfg &= ~(3u << (2u * (n % 16u))); /* level-sensitive */
    *rtc_reg(PL031_IMSC) = 0;
    rtc_clear();
    *gicd32(GICD_ISENABLER + n / 32u * 4u) = 1u << (n % 32u);
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
    uint64_t mine = GUEST_READ_SYSREG(mpidr_el1) & MPIDR_AFF012_MASK;
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
    guest_printf("hostile: attack %s\n", attack);
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
