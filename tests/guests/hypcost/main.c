/*
 * What the hypervisor costs Linux, path by path (issue 27): a micro-benchmark guest that runs the same
 * loops bare on QEMU (entered at EL1, no hypervisor) and as the Linux partition
 * (tests/system/configs/hypcost.toml), so that each figure has its bare reference:
 *  - uart-write, uart-read: a store to the PL011's IMSC (its value kept) and a load of its FR, each a
 *    trapped MMIO round trip under the hypervisor (the emulated UART, hyp/core/vuart.c);
 *  - gicd-write, gicd-read: a store to GICD_ISENABLER1 (the UART's SPI, enabled again) and a load of
 *    GICD_CTLR, which Linux reads after every enable or disable (RWP); the distributor is emulated;
 *  - timer-irq: the virtual timer's PPI made to fire at once, taken, acknowledged, the timer stopped and
 *    the interrupt ended (EOImode 0: drop and deactivate); under the hypervisor it traps to EL2 and is
 *    injected hardware-mapped, so the guest's EOI deactivates it without a trap. timer-entry is the
 *    part from the timer's enable to the handler's first counter read;
 *  - sgi-self: an SGI to itself, sent (a trapped ICC_SGI1R_EL1 write under the hypervisor), taken, ended;
 *  - sgi-pingpong: an SGI to the next CPU, whose handler sends one back (peer=1, the default when a
 *    further CPU can be started): a round trip, two SGIs.
 * Each loop runs n times between two reads of the generic counter (62.5 MHz on QEMU: 16 ns a tick) and
 * prints its time per iteration to the picosecond, `hypcost: PATH n=N ns=X.XXX`. In QEMU's icount mode
 * (1 instruction = 1 ns) that is instructions, the hypervisor's included; elsewhere it follows the host.
 * Waiting for an interrupt is WFI with IRQs masked around the check (no lost wake-up), so that under
 * QEMU's round-robin of vCPUs a waiting CPU gives its turn away instead of spinning through it.
 * `only=PATH` runs one path alone. The last line is `hypcost: done`, then SYSTEM_OFF.
 */
#include "arm64/gicv3.h"
#include "arm64/pl011.h"
#include "arm64/psci.h"
#include "arm64/sysreg.h"
#include "board.h"
#include "guest.h"

/* The virtual timer's PPI (the one Linux uses) and the three SGIs of the measurements (below 13: 13 and
 * 15 are the hypervisor's physical SGIs, tests/guests/smp/main.c). */
#define TIMER_PPI BOARD_INTID_VIRT_TIMER
#define SGI_SELF  1u
#define SGI_PING  2u
#define SGI_PONG  3u
#define IRQ_PRIO  0x80u
/* The UART's SPI, which GICD_ISENABLER1 enables again in gicd-write (the UART's IMSC stays 0, so it
 * never fires). */
#define UART_SPI_BIT (1u << (BOARD_UART_INTID - GIC_SPI_BASE))
/* CNTV_CTL_EL0 */
#define CNT_ENABLE 1u
/* Iterations per loop: enough for the 16-ns counter to give the figure to under 0.005 ns, and a few
 * milliseconds of guest time each under the hypervisor (defaults; `n=` and `irqn=` override). */
#define MMIO_ITERS 20000u
#define IRQ_ITERS  5000u
/* How long a CPU waits for an interrupt or the other CPU (guest time) before it gives up. A WFI with
 * nothing pending ends only at an interrupt, so a lost one can also hang the guest: the runner's
 * timeout catches that. */
#define WAIT_MS 2000u

static volatile uint32_t timer_taken, self_taken, pings, pongs;
static volatile uint64_t timer_entry_ticks, timer_cval;
static volatile uint64_t peer_mpidr, boot_mpidr;
static volatile uint32_t peer_ready;

static void irqs_on(void)
{
    __asm__ volatile("msr daifclr, #2\n\tisb" ::: "memory");
}

static void irqs_off(void)
{
    __asm__ volatile("msr daifset, #2" ::: "memory");
}

/* Sleeps until *p differs from old: the check with IRQs masked, then WFI (a pending interrupt ends it
 * even masked), then the interrupt taken with IRQs open. */
static bool wait_change(volatile uint32_t *p, uint32_t old)
{
    uint64_t end = guest_counter() + WAIT_MS * guest_counter_hz() / 1000u;
    for (;;) {
        irqs_off();
        if (*p != old) {
            irqs_on();
            return true;
        }
        if (guest_counter() > end) {
            irqs_on();
            return false;
        }
        __asm__ volatile("wfi" ::: "memory");
        irqs_on();
    }
}

/* ---------------------------------------------------------------- GIC */

static volatile uint32_t *sgi_frame32(uint64_t off)
{
    return (volatile uint32_t *)(guest_gicr() + GICR_SGI_OFFSET + off);
}

/* The distributor's Group 1 on (bare; the hypervisor keeps its own), this CPU's redistributor awake, its SGIs
 * and the timer's PPI Group 1 (bare, Group 0 after reset; the hypervisor ignores the write), enabled at
 * IRQ_PRIO; the CPU interface on. */
static void gic_cpu_init(void)
{
    uintptr_t rd = guest_gicr();
    volatile uint32_t *waker = (volatile uint32_t *)(rd + GICR_WAKER);
    *waker &= ~GICR_WAKER_PS;
    while (*waker & GICR_WAKER_CA) {
    }
    *(volatile uint32_t *)(BOARD_GICD_BASE + GICD_CTLR) |= GICD_CTLR_ARE_NS | GICD_CTLR_GRP1NS;
    uint32_t mine = (1u << SGI_SELF) | (1u << SGI_PING) | (1u << SGI_PONG) | (1u << TIMER_PPI);
    *sgi_frame32(GICR_IGROUPR0) |= mine;
    volatile uint8_t *prio = (volatile uint8_t *)(rd + GICR_SGI_OFFSET + GICR_IPRIORITYR0);
    for (unsigned i = 0; i < GIC_SPI_BASE; i++) {
        if ((mine >> i) & 1u) {
            prio[i] = IRQ_PRIO;
        }
    }
    *sgi_frame32(GICR_ISENABLER0) = mine;
    GUEST_WRITE_SYSREG(ICC_SRE_EL1, GUEST_READ_SYSREG(ICC_SRE_EL1) | ICC_SRE_SRE);
    __asm__ volatile("isb");
    GUEST_WRITE_SYSREG(ICC_PMR_EL1, ICC_PMR_UNMASKED);
    GUEST_WRITE_SYSREG(ICC_IGRPEN1_EL1, ICC_IGRPEN1_EN);
    __asm__ volatile("isb");
}

static void send_sgi(uint64_t mpidr, unsigned sgi)
{
    __asm__ volatile("dsb sy" ::: "memory");
    GUEST_WRITE_SYSREG(ICC_SGI1R_EL1, icc_sgi1r(mpidr_affinity(mpidr), sgi));
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
    uint64_t iar = GUEST_READ_SYSREG(ICC_IAR1_EL1);
    uint32_t intid = (uint32_t)(iar & GIC_INTID_MASK);
    if (intid >= GIC_INTID_SPECIAL) {
        return;
    }
    if (intid == TIMER_PPI) {
        timer_entry_ticks += guest_counter() - timer_cval;
        GUEST_WRITE_SYSREG(cntv_ctl_el0, 0); /* stopped: its line drops before the EOI */
        __asm__ volatile("isb");
        timer_taken++;
    } else if (intid == SGI_SELF) {
        self_taken++;
    } else if (intid == SGI_PING) {
        pings++;
        send_sgi(boot_mpidr, SGI_PONG);
    } else if (intid == SGI_PONG) {
        pongs++;
    }
    GUEST_WRITE_SYSREG(ICC_EOIR1_EL1, iar);
}

/* ---------------------------------------------------------------- figures */

static uint64_t ticks_ns(uint64_t ticks)
{
    return ticks * 1000000000ull / guest_counter_hz();
}

/* `hypcost: NAME n=N ns=X.XXX`: ns per iteration, from `ticks` for n of them. */
static void report(const char *name, uint64_t n, uint64_t ticks)
{
    uint64_t ps = ticks_ns(ticks) * 1000u / n;
    uint64_t frac = ps % 1000u;
    guest_printf("hypcost: %s n=%lu ns=%lu.%c%c%c\n", name, (unsigned long)n, (unsigned long)(ps / 1000u),
                 (char)('0' + frac / 100u), (char)('0' + frac / 10u % 10u), (char)('0' + frac % 10u));
}

/* Whether the boot arguments ask for path `name`: `only=NAME` runs that one alone (a profile of one
 * path), no `only=` every one. */
static bool wanted(const char *name)
{
    char only[24];
    return !guest_arg("only", only, sizeof(only)) || guest_strcmp(only, name) == 0;
}

static void measure_mmio(uint64_t n)
{
    volatile uint32_t *imsc = (volatile uint32_t *)(BOARD_UART_BASE + PL011_IMSC);
    volatile uint32_t *fr = (volatile uint32_t *)(BOARD_UART_BASE + PL011_FR);
    volatile uint32_t *isen1 = (volatile uint32_t *)(BOARD_GICD_BASE + GICD_ISENABLER + 4u);
    volatile uint32_t *ctlr = (volatile uint32_t *)(BOARD_GICD_BASE + GICD_CTLR);
    uint32_t keep = *imsc, sink = 0;
    uint64_t t0;

    if (wanted("uart-write")) {
        t0 = guest_counter();
        for (uint64_t i = 0; i < n; i++) {
            *imsc = keep;
        }
        report("uart-write", n, guest_counter() - t0);
    }
    if (wanted("uart-read")) {
        t0 = guest_counter();
        for (uint64_t i = 0; i < n; i++) {
            sink += *fr;
        }
        report("uart-read", n, guest_counter() - t0);
    }
    if (wanted("gicd-write")) {
        t0 = guest_counter();
        for (uint64_t i = 0; i < n; i++) {
            *isen1 = UART_SPI_BIT;
        }
        report("gicd-write", n, guest_counter() - t0);
    }
    if (wanted("gicd-read")) {
        t0 = guest_counter();
        for (uint64_t i = 0; i < n; i++) {
            sink += *ctlr;
        }
        report("gicd-read", n, guest_counter() - t0);
    }
    (void)sink;
}

static bool measure_timer(uint64_t n)
{
    timer_entry_ticks = 0;
    uint32_t start = timer_taken;
    uint64_t t0 = guest_counter();
    for (uint64_t i = 0; i < n; i++) {
        uint32_t before = timer_taken;
        uint64_t now = guest_counter();
        timer_cval = now;
        GUEST_WRITE_SYSREG(cntv_cval_el0, now); /* due already: fires as soon as it is enabled */
        GUEST_WRITE_SYSREG(cntv_ctl_el0, CNT_ENABLE);
        __asm__ volatile("isb");
        if (!wait_change(&timer_taken, before)) {
            guest_printf("hypcost: timer-irq: interrupt %lu of %lu not taken\n", (unsigned long)i,
                         (unsigned long)n);
            return false;
        }
    }
    uint64_t ticks = guest_counter() - t0;
    if (timer_taken - start != n) {
        return false;
    }
    report("timer-irq", n, ticks);
    report("timer-entry", n, timer_entry_ticks);
    return true;
}

static bool measure_sgi_self(uint64_t n)
{
    uint64_t me = GUEST_READ_SYSREG(mpidr_el1);
    uint64_t t0 = guest_counter();
    for (uint64_t i = 0; i < n; i++) {
        uint32_t before = self_taken;
        send_sgi(me, SGI_SELF);
        if (!wait_change(&self_taken, before)) {
            guest_printf("hypcost: sgi-self: SGI %lu of %lu not taken\n", (unsigned long)i, (unsigned long)n);
            return false;
        }
    }
    report("sgi-self", n, guest_counter() - t0);
    return true;
}

/* The peer CPU: its GIC on, then it answers pings from its WFI for ever. */
void guest_secondary(uint64_t ctx)
{
    (void)ctx;
    gic_cpu_init();
    peer_mpidr = GUEST_READ_SYSREG(mpidr_el1);
    __asm__ volatile("dsb sy" ::: "memory");
    peer_ready = 1;
    for (;;) {
        irqs_off();
        __asm__ volatile("wfi" ::: "memory");
        irqs_on();
    }
}

static bool measure_pingpong(uint64_t n)
{
    uint64_t me = mpidr_affinity(GUEST_READ_SYSREG(mpidr_el1));
    uint64_t peer = me + 1u; /* the next CPU (Aff0 + 1): bare 1, in rtmux 2 */
    uint64_t entry = (uint64_t)(uintptr_t)guest_secondary_entry;
    int64_t r = guest_hvc(PSCI_CPU_ON_64, peer, entry, 1u);
    if (r != 0 || !wait_change(&peer_ready, 0)) {
        guest_printf("hypcost: sgi-pingpong: CPU_ON of 0x%lx: %ld, started %u\n", (unsigned long)peer,
                     (long)r, (unsigned)peer_ready);
        return false;
    }
    uint64_t t0 = guest_counter();
    for (uint64_t i = 0; i < n; i++) {
        uint32_t before = pongs;
        send_sgi(peer_mpidr, SGI_PING);
        if (!wait_change(&pongs, before)) {
            guest_printf("hypcost: sgi-pingpong: round trip %lu of %lu not done (pings %u)\n",
                         (unsigned long)i, (unsigned long)n, (unsigned)pings);
            return false;
        }
    }
    report("sgi-pingpong", n, guest_counter() - t0);
    return true;
}

void guest_main(void)
{
    uint64_t n = guest_arg_u64("n", MMIO_ITERS), irqn = guest_arg_u64("irqn", IRQ_ITERS);
    boot_mpidr = GUEST_READ_SYSREG(mpidr_el1);
    gic_cpu_init();
    irqs_on();
    guest_printf("hypcost: start cpu=0x%lx hz=%lu\n", (unsigned long)(boot_mpidr & MPIDR_AFF012_MASK),
                 (unsigned long)guest_counter_hz());
    measure_mmio(n);
    bool ok =
        (!wanted("timer-irq") || measure_timer(irqn)) && (!wanted("sgi-self") || measure_sgi_self(irqn));
    if (ok && wanted("sgi-pingpong") && guest_arg_u64("peer", 1u) != 0) {
        ok = measure_pingpong(irqn);
    }
    guest_puts(ok ? "hypcost: done\n" : "hypcost: failed\n");
    guest_power_off();
}
