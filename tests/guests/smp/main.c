/*
 * A bare-metal guest on several CPUs, booted as the Linux partition beside the rtos
 * (tests/system/configs/smp-guest.toml: CPUs 1-3), that checks what a multi-CPU guest relies on from the
 * hypervisor's PSCI and vGIC, and makes the calls the hypervisor must refuse:
 *  - PSCI: CPU_ON for the rtos's CPU, for a CPU the board does not have, with an entry point outside the
 *    partition's RAM or unaligned, for itself; AFFINITY_INFO; then CPU_ON of its own CPUs;
 *  - SGIs (IPIs) from each CPU to the others, by target list and broadcast (IRM), with the rtos's CPU
 *    among the targets; each one waited for, so the counts are exact;
 *  - an SGI's pending and active state through the redistributor (set, cleared, seen while listed);
 *  - priorities: order of two pending SGIs, the priority mask, preemption of a lower by a higher one;
 *  - a level interrupt (the emulated UART's, SPI 33) routed to each further CPU in turn with
 *    GICD_IROUTER: taken there only, again after each EOI while its line stays high, never after it
 *    drops;
 *  - CPU_OFF/CPU_ON cycles (hotplug=N), each checked with an SGI, and an SGI left pending at CPU_OFF
 *    that must not survive into the CPU's next start;
 *  - at the end (end=off|reset) SYSTEM_OFF or SYSTEM_RESET from a CPU that is not the boot CPU: the
 *    whole partition stops, or restarts on its boot CPU alone.
 * Only the boot CPU prints (one line per check, with figures it computed); the others report through
 * shared memory (the MMU is off: every access is uncached, so every CPU sees every store).
 */
#include "arm64/gicv3.h"
#include "arm64/pl011.h"
#include "arm64/psci.h"
#include "arm64/sysreg.h"
#include "board.h"
#include "guest.h"

/* This guest's CPUs are slots 1..3 (Aff0 of QEMU virt's CPUs 1..3); slot = Aff0 % GUEST_CPU_SLOTS. */
#define NCPU GUEST_CPU_SLOTS
/* The rtos's CPU, a CPU the 4-CPU board lacks, and an affinity no CPU has (Aff1 = 1). */
#define RTOS_MPIDR   0u
#define ABSENT_MPIDR 7u
#define AFF1_MPIDR   0x100u
/* Beyond this partition's RAM (16 MiB from where this image is loaded, less its text offset): the
 * rtos's RAM in physical (= this partition's IPA) terms. */
#define RTOS_RAM_PA 0x48000000u
/* How long a CPU waits for another one (guest time) before it reports a failure. */
#define WAIT_MS 2000u
/* SGIs this guest uses (13 and 15 are the hypervisor's physical SGIs: a virtual one of that number
 * works, but its redistributor configuration is not the guest's, so the tests keep off them). */
#define SGI_IPI       1u
#define SGI_PRIO_LOW  11u
#define SGI_PRIO_HIGH 12u
#define SGI_REDIST    9u
#define SGI_ACTIVE    10u
#define SGI_STALE     7u
#define PRIO_LOW      0xa0u
#define PRIO_HIGH     0x40u
/* PL011 interrupt enable bit whose raw status the emulated UART always has set: the transmitter. */
#define UART_TXIM PL011_INT_TX

enum cmd { CMD_NONE, CMD_SEND, CMD_MASK_OFF, CMD_OFF, CMD_SYSTEM_OFF, CMD_SYSTEM_RESET };

struct cpu {
    volatile uint64_t mpidr, ctx;
    volatile uint32_t starts;             /* times it entered guest_secondary */
    volatile uint32_t sgi[GIC_SGI_COUNT]; /* SGIs taken */
    volatile uint32_t uart;               /* UART interrupts taken */
    volatile uint32_t uart_limit;         /* EOIs left asserted before the handler drops the line */
    volatile uint32_t cmd, cmd_seq, done_seq;
    volatile uint64_t arg; /* CMD_SEND: the ICC_SGI1R_EL1 value */
};

static struct cpu cpus[NCPU];
/* Boot CPU's own records: the INTIDs it took, in order (priority checks). */
static volatile uint32_t order[8];
static volatile unsigned norder;
static volatile bool nest; /* the low-priority SGI's handler sends the high one and waits */
static volatile uint32_t active_seen, pending_seen; /* GICR state read from inside a handler */
static volatile uint32_t nested_inside;             /* the high SGI came inside the low one's handler */

static unsigned slot_of(uint64_t mpidr)
{
    return (unsigned)(mpidr & 0xffu) % NCPU;
}

static unsigned my_slot(void)
{
    return slot_of(GUEST_READ_SYSREG(mpidr_el1));
}

static void irqs_on(void)
{
    __asm__ volatile("msr daifclr, #2\n\tisb" ::: "memory");
}

static void irqs_off(void)
{
    __asm__ volatile("msr daifset, #2" ::: "memory");
}

static void dsb(void)
{
    __asm__ volatile("dsb sy" ::: "memory");
}

static uint64_t ms_ticks(uint64_t ms)
{
    return ms * guest_counter_hz() / 1000u;
}

/* Waits until *p == want (at most WAIT_MS); false on a timeout. */
static bool wait_eq(volatile uint32_t *p, uint32_t want)
{
    uint64_t end = guest_counter() + ms_ticks(WAIT_MS);
    while (*p != want) {
        if (guest_counter() > end) {
            return false;
        }
    }
    return true;
}

static void spin_ms(uint64_t ms)
{
    uint64_t end = guest_counter() + ms_ticks(ms);
    while (guest_counter() < end) {
    }
}

/* ---------------------------------------------------------------- GIC */

static volatile uint32_t *sgi_reg(uint64_t off)
{
    return (volatile uint32_t *)(guest_gicr() + GICR_SGI_OFFSET + off);
}

static volatile uint8_t *sgi_prio(unsigned intid)
{
    return (volatile uint8_t *)(guest_gicr() + GICR_SGI_OFFSET + GICR_IPRIORITYR0 + intid);
}

static volatile uint32_t *gicd32(uint64_t off)
{
    return (volatile uint32_t *)(BOARD_GICD_BASE + off);
}

static volatile uint32_t *uart32(uint64_t off)
{
    return (volatile uint32_t *)(BOARD_UART_BASE + off);
}

/* This CPU's CPU interface on, its redistributor awake, SGIs 0..12 enabled at PRIO_LOW. */
static void gic_cpu_on(void)
{
    volatile uint32_t *waker = (volatile uint32_t *)(guest_gicr() + GICR_WAKER);
    *waker &= ~GICR_WAKER_PS;
    while (*waker & GICR_WAKER_CA) {
    }
    for (unsigned i = 0; i < SGI_PRIO_HIGH + 1u; i++) {
        *sgi_prio(i) = PRIO_LOW;
    }
    *sgi_reg(GICR_ISENABLER0) = (1u << (SGI_PRIO_HIGH + 1u)) - 1u;
    GUEST_WRITE_SYSREG(S3_0_C4_C6_0, 0xffu); /* ICC_PMR_EL1: every priority */
    GUEST_WRITE_SYSREG(S3_0_C12_C12_7, 1u);  /* ICC_IGRPEN1_EL1 */
    __asm__ volatile("isb");
}

/* ICC_SGI1R_EL1 value: SGI `sgi` to the CPUs of Aff1 0 in `list` (bit n = Aff0 n), or to all but self. */
static uint64_t sgi1r(unsigned sgi, uint32_t list, bool irm)
{
    return ((uint64_t)sgi << ICC_SGI1R_INTID_SHIFT) | (irm ? ICC_SGI1R_IRM : 0u) | (list & ICC_SGI1R_TARGETS);
}

static void send(uint64_t v)
{
    dsb();
    GUEST_WRITE_SYSREG(S3_0_C12_C11_5, v); /* ICC_SGI1R_EL1 */
    __asm__ volatile("isb");
}

/* ---------------------------------------------------------------- interrupts */

bool guest_on_sync(struct guest_frame *f)
{
    (void)f;
    return false;
}

void guest_on_irq(struct guest_frame *f)
{
    (void)f;
    struct cpu *me = &cpus[my_slot()];
    uint64_t iar = GUEST_READ_SYSREG(S3_0_C12_C12_0); /* ICC_IAR1_EL1 */
    uint32_t intid = (uint32_t)(iar & GIC_INTID_MASK);
    if (intid >= GIC_INTID_SPECIAL) {
        return;
    }
    if (norder < sizeof(order) / sizeof(order[0]) && my_slot() == 1u) {
        order[norder++] = intid;
    }
    if (intid < GIC_SGI_COUNT) {
        if (intid == SGI_ACTIVE) {
            /* Inside the handler (before the EOI): active, no longer pending. */
            active_seen = (*sgi_reg(GICR_ISACTIVER0) >> SGI_ACTIVE) & 1u;
            pending_seen = (*sgi_reg(GICR_ISPENDR0) >> SGI_ACTIVE) & 1u;
        }
        if (intid == SGI_PRIO_LOW && nest) {
            /* Preemption: with IRQs on again inside this handler, a higher-priority SGI comes first. */
            uint32_t before = me->sgi[SGI_PRIO_HIGH];
            irqs_on();
            send(sgi1r(SGI_PRIO_HIGH, 1u << (GUEST_READ_SYSREG(mpidr_el1) & 0xfu), false));
            nested_inside = wait_eq(&me->sgi[SGI_PRIO_HIGH], before + 1u);
            irqs_off();
        }
        me->sgi[intid]++;
    } else if (intid == BOARD_UART_INTID) {
        /* The UART's level interrupt: EOI with the line still high uart_limit - 1 times (it must come
         * back each time), then drop the line before the last EOI (it must not come back). */
        me->uart++;
        if (me->uart >= me->uart_limit) {
            *uart32(PL011_IMSC) = 0;
        }
    }
    dsb();
    GUEST_WRITE_SYSREG(S3_0_C12_C12_1, iar); /* ICC_EOIR1_EL1 (EOImode 0: drop and deactivate) */
}

/* ---------------------------------------------------------------- further CPUs */

void guest_secondary(uint64_t ctx)
{
    struct cpu *me = &cpus[ctx % NCPU];
    me->mpidr = GUEST_READ_SYSREG(mpidr_el1) & MPIDR_AFF012_MASK;
    me->ctx = ctx;
    gic_cpu_on();
    irqs_on();
    dsb();
    me->starts++;
    for (;;) {
        if (me->cmd_seq == me->done_seq) {
            __asm__ volatile("wfi");
            continue;
        }
        uint32_t cmd = me->cmd;
        if (cmd == CMD_SEND) {
            send(me->arg);
        } else if (cmd == CMD_MASK_OFF) {
            irqs_off(); /* SGIs sent now stay pending in this CPU's list registers */
        } else if (cmd == CMD_OFF || cmd == CMD_SYSTEM_OFF || cmd == CMD_SYSTEM_RESET) {
            uint32_t fn = cmd == CMD_OFF          ? PSCI_CPU_OFF
                          : cmd == CMD_SYSTEM_OFF ? PSCI_SYSTEM_OFF
                                                  : PSCI_SYSTEM_RESET;
            me->done_seq = me->cmd_seq;
            dsb();
            (void)guest_hvc(fn, 0, 0, 0);
            for (;;) { /* CPU_OFF never returns */
            }
        }
        dsb();
        me->done_seq = me->cmd_seq;
    }
}

/* Has CPU `slot` do cmd and waits until it did (CMD_OFF: until it asked for it). */
static bool command(unsigned slot, enum cmd cmd, uint64_t arg)
{
    struct cpu *c = &cpus[slot];
    c->cmd = cmd;
    c->arg = arg;
    dsb();
    c->cmd_seq++;
    dsb();
    send(sgi1r(SGI_IPI, 1u << slot, false)); /* out of its WFI */
    return wait_eq(&c->done_seq, c->cmd_seq);
}

/* ---------------------------------------------------------------- the checks */

static int64_t cpu_on(uint64_t mpidr, uint64_t entry, uint64_t ctx)
{
    return guest_hvc(PSCI_CPU_ON_64, mpidr, entry, ctx);
}

static int64_t affinity(uint64_t mpidr)
{
    return guest_hvc(PSCI_AFFINITY_INFO_64, mpidr, 0, 0);
}

static void psci_refusals(void)
{
    uint64_t entry = (uint64_t)(uintptr_t)guest_secondary_entry;
    uint64_t self = GUEST_READ_SYSREG(mpidr_el1) & MPIDR_AFF012_MASK;
    int64_t rtos = cpu_on(RTOS_MPIDR, entry, 0), absent = cpu_on(ABSENT_MPIDR, entry, 0);
    int64_t aff1 = cpu_on(AFF1_MPIDR, entry, 0), outside = cpu_on(2, RTOS_RAM_PA, 2);
    int64_t unaligned = cpu_on(2, entry + 2u, 2), mine = cpu_on(self, entry, 1);
    guest_printf("smp: psci: cpu_on rtos=%ld absent=%ld aff1=%ld outside=%ld unaligned=%ld self=%ld "
                 "affinity rtos=%ld absent=%ld self=%ld cpu2=%ld cpu3=%ld\n",
                 (long)rtos, (long)absent, (long)aff1, (long)outside, (long)unaligned, (long)mine,
                 (long)affinity(RTOS_MPIDR), (long)affinity(ABSENT_MPIDR), (long)affinity(self),
                 (long)affinity(2), (long)affinity(3));
}

static void start_cpus(void)
{
    uint64_t entry = (uint64_t)(uintptr_t)guest_secondary_entry;
    for (unsigned s = 2; s <= 3; s++) {
        uint32_t before = cpus[s].starts;
        int64_t first = cpu_on(s, entry, s), again = cpu_on(s, entry, s);
        bool up = wait_eq(&cpus[s].starts, before + 1u);
        guest_printf("smp: cpu_on cpu%u=%ld again=%ld started=%u mpidr=%lu ctx=%lu affinity=%ld\n", s,
                     (long)first, (long)again, up ? 1u : 0u, (unsigned long)cpus[s].mpidr,
                     (unsigned long)cpus[s].ctx, (long)affinity(s));
    }
}

/* Sends `v` from CPU `from` (1: this one) and waits until each CPU in `expect` took one more `sgi`. */
static bool ipi(unsigned from, uint64_t v, unsigned sgi, uint32_t expect)
{
    uint32_t before[NCPU];
    for (unsigned s = 0; s < NCPU; s++) {
        before[s] = cpus[s].sgi[sgi];
    }
    if (from == 1u) {
        send(v);
    } else if (!command(from, CMD_SEND, v)) {
        return false;
    }
    bool ok = true;
    for (unsigned s = 0; s < NCPU; s++) {
        if ((expect >> s) & 1u) {
            ok &= wait_eq(&cpus[s].sgi[sgi], before[s] + 1u);
        }
    }
    return ok;
}

static void ipis(unsigned rounds)
{
    unsigned sent = 0, lost = 0;
    for (unsigned i = 0; i < rounds; i++) {
        /* to one CPU, to two, to all but the sender (IRM), and to a list that names the rtos's CPU 0 */
        lost += !ipi(1, sgi1r(2, 1u << 2, false), 2, 1u << 2);
        lost += !ipi(1, sgi1r(3, (1u << 2) | (1u << 3), false), 3, (1u << 2) | (1u << 3));
        lost += !ipi(1, sgi1r(4, 0, true), 4, (1u << 2) | (1u << 3));
        lost += !ipi(1, sgi1r(5, 0xfu, false), 5, 0xeu);
        lost += !ipi(2, sgi1r(6, 1u << 3, false), 6, 1u << 3);
        lost += !ipi(3, sgi1r(6, 1u << 1, false), 6, 1u << 1);
        lost += !ipi(3, sgi1r(8, 0, true), 8, (1u << 1) | (1u << 2));
        sent += 7;
    }
    spin_ms(10); /* anything extra would arrive now */
    guest_printf("smp: ipi: rounds=%u sent=%u lost=%u", rounds, sent, lost);
    for (unsigned s = 1; s < NCPU; s++) {
        guest_printf(" cpu%u=", s);
        for (unsigned g = 2; g <= 8; g++) {
            guest_printf("%s%u", g == 2 ? "" : ",", cpus[s].sgi[g]);
        }
    }
    guest_printf("\n");
}

/* The redistributor's view of this CPU's SGIs (its own frame), with IRQs masked at PSTATE so that a
 * pending one stays pending until unmasked. */
static void redistributor(void)
{
    struct cpu *me = &cpus[1];
    const uint32_t bit = 1u << SGI_REDIST;
    irqs_off();
    *sgi_reg(GICR_ISPENDR0) = bit;
    uint32_t set = (*sgi_reg(GICR_ISPENDR0) & bit) != 0;
    *sgi_reg(GICR_ICPENDR0) = bit;
    uint32_t cleared = (*sgi_reg(GICR_ISPENDR0) & bit) != 0;
    uint32_t before = me->sgi[SGI_REDIST];
    irqs_on();
    spin_ms(5);
    irqs_off();
    uint32_t after_clear = me->sgi[SGI_REDIST] - before;
    *sgi_reg(GICR_ISPENDR0) = bit;
    irqs_on();
    spin_ms(5);
    irqs_off();
    uint32_t after_set = me->sgi[SGI_REDIST] - before - after_clear;
    /* An SGI sent to itself is pending (in a list register): the redistributor shows it and clears it. */
    send(sgi1r(SGI_REDIST, 1u << 1, false));
    uint32_t sent_pending = (*sgi_reg(GICR_ISPENDR0) & bit) != 0;
    *sgi_reg(GICR_ICPENDR0) = bit;
    uint32_t sent_cleared = (*sgi_reg(GICR_ISPENDR0) & bit) != 0;
    before = me->sgi[SGI_REDIST];
    irqs_on();
    spin_ms(5);
    irqs_off();
    uint32_t sent_taken = me->sgi[SGI_REDIST] - before;
    /* Active: set and cleared through the redistributor; and while its handler runs. */
    const uint32_t abit = 1u << SGI_ACTIVE;
    *sgi_reg(GICR_ISACTIVER0) = abit;
    uint32_t active = (*sgi_reg(GICR_ISACTIVER0) & abit) != 0;
    *sgi_reg(GICR_ICACTIVER0) = abit;
    uint32_t inactive = (*sgi_reg(GICR_ISACTIVER0) & abit) != 0;
    before = me->sgi[SGI_ACTIVE];
    send(sgi1r(SGI_ACTIVE, 1u << 1, false));
    irqs_on();
    (void)wait_eq(&me->sgi[SGI_ACTIVE], before + 1u);
    uint32_t after_eoi = (*sgi_reg(GICR_ISACTIVER0) & abit) != 0;
    guest_printf("smp: redist: set=%u cleared=%u taken-after-clear=%u taken-after-set=%u sent-pending=%u "
                 "sent-cleared=%u sent-taken=%u active=%u inactive=%u handler-active=%u handler-pending=%u "
                 "after-eoi=%u\n",
                 set, cleared, after_clear, after_set, sent_pending, sent_cleared, sent_taken, active,
                 inactive, active_seen, pending_seen, after_eoi);
}

static void priorities(void)
{
    struct cpu *me = &cpus[1];
    const uint64_t self = 1u << 1;
    *sgi_prio(SGI_PRIO_LOW) = PRIO_LOW;
    *sgi_prio(SGI_PRIO_HIGH) = PRIO_HIGH;
    /* Both pending: the higher priority (lower value) is taken first, whatever the order sent. */
    irqs_off();
    norder = 0;
    send(sgi1r(SGI_PRIO_LOW, self, false));
    send(sgi1r(SGI_PRIO_HIGH, self, false));
    irqs_on();
    spin_ms(5);
    uint32_t first = order[0], second = order[1];
    /* The priority mask between them: only the higher one is taken until it opens. */
    irqs_off();
    GUEST_WRITE_SYSREG(S3_0_C4_C6_0, (PRIO_LOW + PRIO_HIGH) / 2u);
    uint32_t low = me->sgi[SGI_PRIO_LOW], high = me->sgi[SGI_PRIO_HIGH];
    send(sgi1r(SGI_PRIO_LOW, self, false));
    send(sgi1r(SGI_PRIO_HIGH, self, false));
    irqs_on();
    spin_ms(5);
    uint32_t masked_low = me->sgi[SGI_PRIO_LOW] - low, masked_high = me->sgi[SGI_PRIO_HIGH] - high;
    GUEST_WRITE_SYSREG(S3_0_C4_C6_0, 0xffu);
    __asm__ volatile("isb");
    spin_ms(5);
    uint32_t opened_low = me->sgi[SGI_PRIO_LOW] - low;
    /* Preemption: the low one's handler unmasks IRQs and sends the high one, which runs inside it. */
    irqs_off();
    norder = 0;
    nest = true;
    send(sgi1r(SGI_PRIO_LOW, self, false));
    irqs_on();
    spin_ms(5);
    nest = false;
    guest_printf("smp: priority: first=%u second=%u masked-low=%u masked-high=%u opened-low=%u nested=%u,%u "
                 "inside=%u\n",
                 first, second, masked_low, masked_high, opened_low, order[0], order[1], nested_inside);
}

/* The UART's level interrupt routed to CPU `slot`: taken there `limit` times (the line stays high
 * through limit - 1 EOIs), then never again; no other CPU takes it. */
static void level_on(unsigned slot, uint32_t limit)
{
    const unsigned spi = BOARD_UART_INTID;
    uint32_t before[NCPU];
    for (unsigned s = 0; s < NCPU; s++) {
        before[s] = cpus[s].uart;
    }
    cpus[slot].uart_limit = cpus[slot].uart + limit;
    *(volatile uint64_t *)(BOARD_GICD_BASE + GICD_IROUTER + spi * 8u) = cpus[slot].mpidr;
    *(volatile uint8_t *)(BOARD_GICD_BASE + GICD_IPRIORITYR + spi) = PRIO_LOW;
    *gicd32(GICD_ISENABLER + spi / 32u * 4u) = 1u << (spi % 32u);
    dsb();
    *uart32(PL011_IMSC) = UART_TXIM; /* its raw status is always set: the line goes high */
    (void)wait_eq(&cpus[slot].uart, cpus[slot].uart_limit);
    spin_ms(10);
    uint64_t route = *(volatile uint64_t *)(BOARD_GICD_BASE + GICD_IROUTER + spi * 8u);
    *gicd32(GICD_ICENABLER + spi / 32u * 4u) = 1u << (spi % 32u);
    guest_printf("smp: level: routed=cpu%u irouter=%lu taken", slot, (unsigned long)route);
    for (unsigned s = 1; s < NCPU; s++) {
        guest_printf(" cpu%u=%u", s, cpus[s].uart - before[s]);
    }
    guest_printf(" limit=%u\n", limit);
}

/* CPU_OFF and CPU_ON again, `n` times, on CPU 2 then 3 by turns; each start checked with an SGI. The first
 * cycle leaves an SGI pending at CPU_OFF: it must not be taken after the next start. */
static void hotplug(unsigned n)
{
    uint64_t entry = (uint64_t)(uintptr_t)guest_secondary_entry;
    unsigned ok = 0, off_seen = 0;
    uint32_t stale_before = cpus[2].sgi[SGI_STALE];
    for (unsigned i = 0; i < n; i++) {
        unsigned s = 2u + i % 2u;
        if (i == 0) {
            (void)command(s, CMD_MASK_OFF, 0);
            send(sgi1r(SGI_STALE, 1u << s, false));
        }
        (void)command(s, CMD_OFF, 0);
        uint64_t end = guest_counter() + ms_ticks(WAIT_MS);
        int64_t a;
        while ((a = affinity(s)) != PSCI_AFFINITY_OFF && guest_counter() < end) {
        }
        off_seen += a == PSCI_AFFINITY_OFF;
        uint32_t before = cpus[s].starts;
        int64_t on = cpu_on(s, entry, s);
        bool up = wait_eq(&cpus[s].starts, before + 1u);
        ok += on == PSCI_SUCCESS && up && ipi(1, sgi1r(SGI_IPI + 1u, 1u << s, false), SGI_IPI + 1u, 1u << s);
    }
    spin_ms(10);
    guest_printf("smp: hotplug: cycles=%u ok=%u off-seen=%u stale=%u\n", n, ok, off_seen,
                 cpus[2].sgi[SGI_STALE] - stale_before);
}

void guest_main(void)
{
    uint64_t self = GUEST_READ_SYSREG(mpidr_el1) & MPIDR_AFF012_MASK;
    /* At each start only the boot CPU runs: the others are off (a restart does not start them). */
    guest_printf("smp: start cpu=%lu others-off=%u\n", (unsigned long)self,
                 affinity(2) == PSCI_AFFINITY_OFF && affinity(3) == PSCI_AFFINITY_OFF ? 1u : 0u);
    cpus[1].mpidr = self;
    gic_cpu_on();
    irqs_on();
    psci_refusals();
    start_cpus();
    ipis((unsigned)guest_arg_u64("rounds", 20));
    redistributor();
    irqs_on();
    priorities();
    level_on(2, 3);
    level_on(3, 2);
    hotplug((unsigned)guest_arg_u64("hotplug", 20));
    char end[8] = "off";
    (void)guest_arg("end", end, sizeof(end));
    bool reset = guest_strcmp(end, "reset") == 0;
    guest_printf("smp: done; CPU 3 asks for %s\n", reset ? "SYSTEM_RESET" : "SYSTEM_OFF");
    (void)command(3, reset ? CMD_SYSTEM_RESET : CMD_SYSTEM_OFF, 0);
    guest_halt();
}
