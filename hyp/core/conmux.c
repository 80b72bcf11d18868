/*
 * The console line mux: every partition's emulated UART output reaches the physical console as tagged
 * lines, drained on one CPU whose interrupts trap to EL2 (never the rtos's: the rtos only appends to
 * its ring), and typed input goes to the focused partition.
 */
#include "hyp/conmux.h"

#include "arch/spinlock.h"
#include "arch/timer.h"
#include "arch/vgic.h"
#include "arm64/pl011.h"
#include "board.h"
#include "drivers/gicv3.h"
#include "drivers/pl011.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/vcpu.h"
#include "hyp/vuart.h"
#include "lib/conring.h"

/* Priority of the UART input interrupt at the physical GIC. The drain CPU takes every interrupt at EL2
 * with ICC_PMR_EL1 fully open (vgic_cpu_init), so this only orders it among pending ones: mid-range, as
 * the hypervisor's PPIs. */
#define CONMUX_UART_PRIO 0x80u

int con_drain_cpu = -1;
struct partition *con_focus;
static uint8_t escape_key;
static bool escape_pending; /* only the drain CPU reads input */

void conmux_init(unsigned focus, uint8_t escape)
{
    escape_key = escape;
    con_focus = &hyp_part[focus];
    for (unsigned i = 0; i < hyp_nparts; i++) {
        if (hyp_part[i].kind == PART_LINUX) {
            con_drain_cpu = __builtin_ctzll(hyp_part[i].cpu_mask);
            pl011_rx_irq_enable();
            gicv3_spi_route(BOARD_UART_INTID, hyp_vcpu[con_drain_cpu].mpidr, CONMUX_UART_PRIO);
            hyp_printf("rtmux: console input goes to %s; escape (0x%02x) then 1..%u switches partitions\n",
                       con_focus->name, escape_key, hyp_nparts);
            return;
        }
    }
}

/* Serialises a partition's console ring between the drain CPU and the partition's own CPU closing it
 * before a stop or reset: one consumer at a time, and no read of RAM being wiped. */
static spinlock_t ring_lock[HYP_MAX_PARTITIONS];

/* Moves what p wrote into its console ring to its UART model's output (caller holds its ring lock).
 * The partition is trusted with its ring but its indices are still bounded: at most one ring's worth. */
static void ring_pull(struct partition *p)
{
    if (!__atomic_load_n(&p->conring_on, __ATOMIC_ACQUIRE)) {
        return;
    }
    struct conring *r = p->conring;
    uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    uint32_t tail = p->conring_tail;
    if (head - tail > p->conring_size) {
        tail = head - p->conring_size; /* a producer past the invariant: keep its newest ring's worth */
    }
    for (; tail != head; tail++) {
        vuart_tx_push(&p->uart, r->data[tail & (p->conring_size - 1u)]);
    }
    p->conring_tail = tail;
    __atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
    uint32_t dropped = __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);
    if (dropped != p->conring_dropped) {
        hyp_printf("rtmux: %s: console ring full, %u characters dropped\n", p->name,
                   dropped - p->conring_dropped);
        p->conring_dropped = dropped;
    }
}

void con_ring_close(struct partition *p)
{
    spinlock_t *lock = &ring_lock[part_index(p)];
    spin_lock(lock);
    ring_pull(p);
    __atomic_store_n(&p->conring_on, false, __ATOMIC_RELEASE);
    spin_unlock(lock);
}

void con_drain(bool flush_partial)
{
    for (unsigned i = 0; i < hyp_nparts; i++) {
        struct partition *p = &hyp_part[i];
        if (p->conring != NULL) {
            spin_lock(&ring_lock[i]);
            ring_pull(p);
            spin_unlock(&ring_lock[i]);
        }
        vuart_drain(&p->uart, p->name, p->tag, flush_partial);
    }
}

static void rx_char(char c)
{
    if (escape_pending) {
        escape_pending = false;
        if (c >= '1' && c < (char)('1' + hyp_nparts)) {
            con_focus = &hyp_part[c - '1'];
            hyp_printf("\nrtmux: console input now goes to %s\n", con_focus->name);
            return;
        }
        if (c == 'e') {
            hyp_printf("\n");
            vcpu_report_entries();
            return;
        }
        if (c != (char)escape_key) {
            hyp_printf("\nrtmux: escape then 1..%u chooses the partition that gets input, then e shows the "
                       "hypervisor's entries per CPU; escape twice sends the escape character\n",
                       hyp_nparts);
            return;
        }
    } else if (c == (char)escape_key) {
        escape_pending = true;
        return;
    }
    if (con_focus != NULL && con_focus->state == PART_RUNNING) {
        vuart_rx(&con_focus->uart, c);
    }
}

void conmux_rx_irq(struct vcpu *v)
{
    /* Clear the interrupt before draining, then look again: QEMU's PL011 (like a FIFO with trigger
     * level 1) signals only when the FIFO goes from empty to non-empty, so a character that arrived
     * between the last read and a late clear would otherwise sit unnoticed. */
    for (;;) {
        pl011_rx_irq_clear();
        if (pl011_rx_empty()) {
            break;
        }
        while (!pl011_rx_empty()) {
            rx_char(pl011_getc());
        }
    }
    if (v->part != NULL && v->part == con_focus && v->part->state == PART_RUNNING) {
        vgic_sync_levels(v);
    }
}

void conmux_tick(struct vcpu *v)
{
    (void)v;
    arch_hyp_timer_arm(CONMUX_TICK_HZ); /* level interrupt: the new deadline lowers it */
    con_drain(true);
}

bool conmux_uart_mmio(struct vcpu *v, void *ctx, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    struct partition *p = ctx;
    bool handled = vuart_access(&p->uart, off, write, val, size);
    if (write && off == PL011_DR && (con_drain_cpu < 0 || (unsigned)con_drain_cpu == v->cpu)) {
        con_drain(false); /* this CPU is the one that writes to the UART anyway */
    }
    if (p->kind == PART_LINUX) {
        vgic_sync_levels(v);
    }
    return handled;
}
