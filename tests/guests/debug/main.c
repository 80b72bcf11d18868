/*
 * Debug and PMU conformance guest: what a kernel that owns its CPU can do with the self-hosted debug
 * architecture and the performance monitors, run the same way bare on QEMU (entered at EL1) and as the
 * Linux-kind partition under rtmux. Every line it prints starting "debug:" is a figure it computed; the
 * test (tests/system/test_debug_pmu.py) compares the two runs line for line.
 *
 *   ids          the breakpoints, watchpoints, PMU version and event counters the ID registers announce
 *   breakpoints  each breakpoint in turn on an instruction of a sled, hit once
 *   watchpoints  each watchpoint on its own doubleword, hit by a store, with FAR naming it
 *   step         software step over a sequence with an emulated MMIO read, a PMU register, an HVC and a
 *                WFI-free system register: one step exception per instruction, in order
 *   pmu          the cycle counter moves; every event counter counts the retired instructions of a
 *                loop exactly (icount), at EL1 only (PMEVTYPER.NSH clear)
 *   pmu-long     the same over 6 ms, across interrupts the hypervisor or the rtos take
 *   overflow     an event counter set to overflow raises the PMU interrupt (PPI 23) once, with its flag
 *
 * ticker=1 runs the checks on CPU 1 while CPU 0 stands in for the rtos (a little work every 1 ms): the
 * layout of a partition beside the rtos, without a hypervisor. Under icount QEMU's INST_RETIRED and cycle
 * counts follow the virtual clock, which every vCPU's instructions advance, so there pmu-long counts the
 * other CPU's work too (seen bare: 6,004,365 for the 6,000,004 of -smp 1, five ticks inside the loop).
 */
#include <stdbool.h>
#include <stdint.h>

#include "arm64/esr.h"
#include "arm64/gicv3.h"
#include "arm64/pl011.h"
#include "arm64/psci.h"
#include "arm64/sysreg.h"
#include "board.h"
#include "guest.h"

/* Exception classes of debug exceptions taken from the current EL (EL1). */
#define EC_BREAKPOINT_CUR 0x31u
#define EC_STEP_CUR       0x33u
#define EC_WATCHPOINT_CUR 0x35u

/* SPSR_EL1.D: debug exceptions masked. */
#define SPSR_D (1u << 9)

/* DBGBCR: enabled, PMC = EL1 and EL0, BAS = the whole A64 instruction. */
#define DBGBCR_EL1_EL0 0x1e7u
/* DBGWCR: enabled, PAC = EL1 and EL0, LSC = loads and stores, BAS = all 8 bytes. */
#define DBGWCR_EL1_EL0_RW8 0x1fffu

/* PMU */
#define PMCR_N(v)        (((v) >> PMCR_N_SHIFT) & PMCR_N_MASK)
#define PMU_CYCLE_BIT    (1u << 31)
#define PMU_INST_RETIRED 0x08u
#define PMU_INTID        23u /* PPI 7: QEMU virt's PMU interrupt */
#define OVERFLOW_AFTER   1000u
#define PMU_LOOP_ITERS   5000u
/* 6 ms of icount time: beyond the rtos demo's 1 ms period, so on a CPU shared with it the rtos runs
 * several times inside the loop, and what it runs must not be counted. */
#define PMU_LONG_ITERS     3000000u
#define ID_FIELD(v, shift) ((unsigned)((v) >> (shift)) & 0xfu)

/* ticker=1: CPU 0 stands in for the rtos beside the checks, which run on CPU 1. */
#define TICK_INTID 27u   /* the EL1 virtual timer's PPI */
#define TICK_US    1000u /* the rtos demo's period */
#define TICK_WORK  400u  /* loop iterations per tick: about the demo's 800 instructions */
static volatile uint64_t tick_step;

/* The step sequence (step_seq below) is STEP_INSNS instructions from step_begin to step_end. */
#define STEP_INSNS 7u
#define STEP_MAX   32u

static volatile unsigned bp_hits, bp_order_ok, wp_hits, wp_far_ok;
static volatile uint64_t sled_base;
static volatile uint64_t watched[16] __attribute__((aligned(64)));
static volatile uint64_t step_elr[STEP_MAX];
static volatile unsigned step_count, step_armed;
static volatile uint64_t step_end_addr;
static volatile unsigned pmu_irqs, pmu_flags;

void step_seq(void);
void bp_sled(void);

/* 16 NOPs, one breakpoint target each, then a return. */
__asm__(".pushsection .text\n"
        ".balign 64\n"
        ".globl bp_sled\n"
        "bp_sled:\n"
        ".rept 16\n nop\n .endr\n"
        "ret\n"
        ".popsection\n");

/* A BRK starts the stepping (the handler sets SPSR.SS and MDSCR.SS), then STEP_INSNS instructions: an
 * MMIO read of the UART's flag register (emulated by the hypervisor in a partition), a PMU register
 * read, an HVC (PSCI_VERSION), plain arithmetic. x0..x3 are the HVC's; x9..x12 are scratch. */
__asm__(".pushsection .text\n"
        ".globl step_seq\n"
        "step_seq:\n"
        "brk #0x55\n"
        "step_begin:\n"
        "mov x9, #1\n"
        "ldr w10, [x11]\n"
        "mrs x12, pmcr_el0\n"
        "hvc #0\n"
        "add x9, x9, #1\n"
        "add x9, x9, x10\n"
        "add x9, x9, #1\n"
        "step_end:\n"
        "ret\n"
        ".popsection\n");

// clang-format off
#define BP_CASE(n) case n: GUEST_WRITE_SYSREG(dbgbvr##n##_el1, addr); GUEST_WRITE_SYSREG(dbgbcr##n##_el1, ctrl); break;
#define WP_CASE(n) case n: GUEST_WRITE_SYSREG(dbgwvr##n##_el1, addr); GUEST_WRITE_SYSREG(dbgwcr##n##_el1, ctrl); break;
#define CASES_0_15(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
// clang-format on

static void set_bp(unsigned n, uint64_t addr, uint64_t ctrl)
{
    switch (n) {
        CASES_0_15(BP_CASE)
    default:
        break;
    }
    __asm__ volatile("isb");
}

static void set_wp(unsigned n, uint64_t addr, uint64_t ctrl)
{
    switch (n) {
        CASES_0_15(WP_CASE)
    default:
        break;
    }
    __asm__ volatile("isb");
}

static void pmu_set_type(unsigned n, uint64_t type)
{
    GUEST_WRITE_SYSREG(pmselr_el0, n);
    __asm__ volatile("isb");
    GUEST_WRITE_SYSREG(pmxevtyper_el0, type);
}

static uint64_t pmu_read(unsigned n)
{
    GUEST_WRITE_SYSREG(pmselr_el0, n);
    __asm__ volatile("isb");
    return GUEST_READ_SYSREG(pmxevcntr_el0);
}

static void pmu_write(unsigned n, uint64_t v)
{
    GUEST_WRITE_SYSREG(pmselr_el0, n);
    __asm__ volatile("isb");
    GUEST_WRITE_SYSREG(pmxevcntr_el0, v);
}

/* 2 * iters + 1 instructions retired: the count the PMU must see. */
static void busy(uint64_t iters)
{
    __asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(iters) : : "cc");
}

bool guest_on_sync(struct guest_frame *f)
{
    unsigned ec = (unsigned)ESR_EC(f->esr);
    if (ec == EC_BREAKPOINT_CUR) {
        unsigned n = (unsigned)((f->elr - sled_base) / 4u);
        bp_order_ok += n == bp_hits;
        bp_hits++;
        set_bp(n, 0, 0); /* off: the instruction runs when we return to it */
        return true;
    }
    if (ec == EC_WATCHPOINT_CUR) {
        uint64_t far = GUEST_READ_SYSREG(far_el1);
        unsigned n = (unsigned)((far - (uint64_t)(uintptr_t)watched) / 8u);
        wp_far_ok += far == (uint64_t)(uintptr_t)&watched[wp_hits];
        wp_hits++;
        set_wp(n < 16u ? n : 0u, 0, 0);
        return true;
    }
    if (ec == ESR_EC_BRK64 && (f->esr & 0xffffu) == 0x55u) {
        f->elr += 4;
        f->spsr = (f->spsr | SPSR_SS) & ~(uint64_t)SPSR_D;
        GUEST_WRITE_SYSREG(mdscr_el1, GUEST_READ_SYSREG(mdscr_el1) | MDSCR_SS);
        step_armed = 1;
        return true;
    }
    if (ec == EC_STEP_CUR && step_armed) {
        if (step_count < STEP_MAX) {
            step_elr[step_count] = f->elr;
        }
        step_count++;
        if (f->elr == step_end_addr || step_count >= STEP_MAX) {
            GUEST_WRITE_SYSREG(mdscr_el1, GUEST_READ_SYSREG(mdscr_el1) & ~(uint64_t)MDSCR_SS);
            f->spsr &= ~(uint64_t)SPSR_SS;
            step_armed = 0;
        } else {
            f->spsr |= SPSR_SS;
        }
        return true;
    }
    return false;
}

/* This CPU's redistributor awake, the distributor's Group 1 on, the CPU interface taking every priority. */
static void gic_cpu_init(void)
{
    uintptr_t rd = guest_gicr();
    volatile uint32_t *waker = (volatile uint32_t *)(rd + GICR_WAKER);
    *waker &= ~GICR_WAKER_PS;
    while (*waker & GICR_WAKER_CA) {
    }
    *(volatile uint32_t *)(BOARD_GICD_BASE + GICD_CTLR) |= GICD_CTLR_ARE_NS | GICD_CTLR_GRP1NS;
    GUEST_WRITE_SYSREG(S3_0_C12_C12_5, GUEST_READ_SYSREG(S3_0_C12_C12_5) | 1u); /* ICC_SRE_EL1.SRE */
    __asm__ volatile("isb");
    GUEST_WRITE_SYSREG(S3_0_C4_C6_0, 0xffu); /* ICC_PMR_EL1: every priority */
    GUEST_WRITE_SYSREG(S3_0_C12_C12_7, 1u);  /* ICC_IGRPEN1_EL1 */
    __asm__ volatile("isb");
}

/* A private interrupt of this CPU: Group 1, priority 0x80, enabled. */
static void gic_ppi_enable(unsigned intid)
{
    uintptr_t sgi = guest_gicr() + GICR_SGI_OFFSET;
    *(volatile uint32_t *)(sgi + GICR_IGROUPR0) |= 1u << intid;
    ((volatile uint8_t *)(sgi + GICR_IPRIORITYR0))[intid] = 0x80u;
    *(volatile uint32_t *)(sgi + GICR_ISENABLER0) = 1u << intid;
}

void guest_on_irq(struct guest_frame *f)
{
    (void)f;
    uint64_t iar = GUEST_READ_SYSREG(S3_0_C12_C12_0); /* ICC_IAR1_EL1 */
    uint32_t intid = (uint32_t)(iar & GIC_INTID_MASK);
    if (intid >= GIC_INTID_SPECIAL) {
        return;
    }
    if (intid == TICK_INTID) {
        GUEST_WRITE_SYSREG(cntv_cval_el0, GUEST_READ_SYSREG(cntv_cval_el0) + tick_step);
        busy(TICK_WORK);
    } else if (intid == PMU_INTID) {
        pmu_irqs++;
        pmu_flags = (unsigned)GUEST_READ_SYSREG(pmovsset_el0);
        GUEST_WRITE_SYSREG(pmcntenclr_el0, 1u);
        GUEST_WRITE_SYSREG(pmovsclr_el0, pmu_flags);
        __asm__ volatile("isb");
    }
    GUEST_WRITE_SYSREG(S3_0_C12_C12_1, iar); /* ICC_EOIR1_EL1 (EOImode 0: drop and deactivate) */
}

static void report_ids(void)
{
    uint64_t dfr0 = GUEST_READ_SYSREG(id_aa64dfr0_el1);
    uint64_t pmcr = GUEST_READ_SYSREG(pmcr_el0);
    guest_printf("debug: ids debugver=%u brps=%u wrps=%u ctx_cmps=%u pmuver=%u counters=%u\n",
                 ID_FIELD(dfr0, 0), ID_FIELD(dfr0, 12) + 1u, ID_FIELD(dfr0, 20) + 1u, ID_FIELD(dfr0, 28) + 1u,
                 ID_FIELD(dfr0, 8), (unsigned)PMCR_N(pmcr));
}

static void test_breakpoints(void)
{
    unsigned brps = ID_FIELD(GUEST_READ_SYSREG(id_aa64dfr0_el1), 12) + 1u;
    sled_base = (uint64_t)(uintptr_t)bp_sled;
    for (unsigned n = 0; n < brps; n++) {
        set_bp(n, sled_base + 4u * n, DBGBCR_EL1_EL0);
    }
    bp_sled();
    guest_printf("debug: breakpoints: %u of %u hit, %u in order\n", bp_hits, brps, bp_order_ok);
}

static void test_watchpoints(void)
{
    unsigned wrps = ID_FIELD(GUEST_READ_SYSREG(id_aa64dfr0_el1), 20) + 1u;
    for (unsigned n = 0; n < wrps; n++) {
        set_wp(n, (uint64_t)(uintptr_t)&watched[n], DBGWCR_EL1_EL0_RW8);
    }
    for (unsigned n = 0; n < wrps; n++) {
        watched[n] = n + 1u;
    }
    unsigned stored = 0;
    for (unsigned n = 0; n < wrps; n++) {
        stored += watched[n] == n + 1u;
    }
    guest_printf("debug: watchpoints: %u of %u hit, FAR right %u, stores done %u\n", wp_hits, wrps, wp_far_ok,
                 stored);
}

static void test_step(void)
{
    uint64_t begin, end;
    __asm__("adr %0, step_begin\n\tadr %1, step_end" : "=r"(begin), "=r"(end));
    step_end_addr = end;
    register uint64_t x0 __asm__("x0") = PSCI_VERSION;
    register uint64_t x11 __asm__("x11") = BOARD_UART_BASE + PL011_FR;
    __asm__ volatile("bl step_seq"
                     : "+r"(x0), "+r"(x11)
                     :
                     : "x1", "x2", "x3", "x9", "x10", "x12", "x30", "memory", "cc");
    unsigned in_order = 0;
    for (unsigned i = 0; i < step_count && i < STEP_MAX; i++) {
        in_order += step_elr[i] == begin + 4u * (i + 1u);
    }
    guest_printf("debug: step: %u steps over %u instructions, %u in order, psci version 0x%lx\n", step_count,
                 (unsigned)((end - begin) / 4u), in_order, (unsigned long)x0);
}

/* `iters` loop iterations counted by every event counter (INST_RETIRED) and the cycle counter. */
static void test_pmu(const char *name, uint32_t iters)
{
    unsigned counters = (unsigned)PMCR_N(GUEST_READ_SYSREG(pmcr_el0));
    GUEST_WRITE_SYSREG(pmcr_el0, PMCR_P | PMCR_C | PMCR_LC);
    GUEST_WRITE_SYSREG(pmccfiltr_el0, 0); /* EL1 and EL0, not EL2 */
    for (unsigned n = 0; n < counters; n++) {
        pmu_set_type(n, PMU_INST_RETIRED);
    }
    GUEST_WRITE_SYSREG(pmcntenset_el0, PMU_CYCLE_BIT | ((1u << counters) - 1u));
    __asm__ volatile("isb");
    uint64_t c0 = GUEST_READ_SYSREG(pmccntr_el0);
    GUEST_WRITE_SYSREG(pmcr_el0, PMCR_E | PMCR_LC);
    busy(iters);
    GUEST_WRITE_SYSREG(pmcr_el0, PMCR_LC);
    __asm__ volatile("isb");
    uint64_t c1 = GUEST_READ_SYSREG(pmccntr_el0);
    unsigned exact = 0;
    uint64_t first = pmu_read(0);
    for (unsigned n = 0; n < counters; n++) {
        exact += pmu_read(n) == first;
    }
    guest_printf("debug: %s: %u counters, counter 0 counted %lu instructions for a %u-instruction loop, %u "
                 "counters agree, cycle counter moved %s\n",
                 name, counters, (unsigned long)first, 2u * iters + 1u, exact,
                 c1 - c0 >= iters ? "yes" : "no");
    GUEST_WRITE_SYSREG(pmcntenclr_el0, 0xffffffffu);
}

static void test_overflow(void)
{
    gic_cpu_init();
    gic_ppi_enable(PMU_INTID);
    pmu_set_type(0, PMU_INST_RETIRED);
    pmu_write(0, 0x100000000ull - OVERFLOW_AFTER);
    GUEST_WRITE_SYSREG(pmovsclr_el0, 0xffffffffu);
    GUEST_WRITE_SYSREG(pmintenset_el1, 1u);
    GUEST_WRITE_SYSREG(pmcntenset_el0, 1u);
    __asm__ volatile("isb");
    __asm__ volatile("msr daifclr, #2");
    GUEST_WRITE_SYSREG(pmcr_el0, PMCR_E | PMCR_LC);
    busy(4u * OVERFLOW_AFTER);
    /* QEMU 7.2 notices an event counter's overflow when the counter is next brought up to date (an access
     * to a PMU register), not when it happens: seen bare, where no flag was set after the loop until this
     * read. A real PMU raises it at once; the read changes nothing there. */
    (void)pmu_read(0);
    uint64_t end = guest_counter() + guest_counter_hz() / 100u; /* 10 ms for the interrupt to arrive */
    while (pmu_irqs == 0 && guest_counter() < end) {
    }
    __asm__ volatile("msr daifset, #2");
    GUEST_WRITE_SYSREG(pmcr_el0, 0);
    GUEST_WRITE_SYSREG(pmintenclr_el1, 0xffffffffu);
    guest_printf("debug: overflow: PMU interrupt %u taken %u times, overflow flags 0x%x\n", PMU_INTID,
                 pmu_irqs, pmu_flags);
}

static void ticker_start(void)
{
    gic_cpu_init();
    gic_ppi_enable(TICK_INTID);
    tick_step = guest_counter_hz() / (1000000u / TICK_US);
    GUEST_WRITE_SYSREG(cntv_cval_el0, guest_counter() + tick_step);
    GUEST_WRITE_SYSREG(cntv_ctl_el0, 1u); /* ENABLE */
    __asm__ volatile("msr daifclr, #2");
}

static void __attribute__((noreturn)) checks(void)
{
    GUEST_WRITE_SYSREG(oslar_el1, 0); /* the OS lock, set at reset, off: debug exceptions on */
    GUEST_WRITE_SYSREG(mdscr_el1, MDSCR_MDE | MDSCR_KDE);
    __asm__ volatile("isb\n\tmsr daifclr, #8" : : : "memory"); /* PSTATE.D clear */
    report_ids();
    test_breakpoints();
    test_watchpoints();
    test_step();
    test_pmu("pmu", PMU_LOOP_ITERS);
    test_pmu("pmu-long", PMU_LONG_ITERS);
    test_overflow();
    guest_puts("debug: done\n");
    guest_power_off();
}

void guest_secondary(uint64_t ctx)
{
    (void)ctx;
    checks();
}

void guest_main(void)
{
    if (guest_arg_u64("ticker", 0) == 0) {
        checks();
    }
    /* The layout of a partition beside the rtos: the checks on CPU 1, the ticker on CPU 0 (where QEMU's
     * icount round-robin starts each round), ticking before the checks start. */
    ticker_start();
    int64_t r = guest_hvc(PSCI_CPU_ON_64, 1, (uint64_t)(uintptr_t)guest_secondary_entry, 1);
    guest_printf("guest: checks on CPU 1 (CPU_ON: %ld), CPU 0 ticks every %u us\n", (long)r, TICK_US);
    for (;;) {
        __asm__ volatile("wfi");
    }
}
