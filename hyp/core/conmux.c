/*
 * The console line mux: every partition's emulated UART output reaches the physical console as tagged
 * lines, drained on one CPU whose interrupts trap to EL2 (never the rtos's: the rtos only appends to
 * its ring), and typed input goes to the focused partition.
 */
#include "hyp/conmux.h"

#include "arch/cpu.h"
#include "arch/spinlock.h"
#include "arch/timer.h"
#include "arch/vgic.h"
#include "arm64/pl011.h"
#include "board.h"
#include "drivers/gic.h"
#include "drivers/uart.h"
#include "hyp/console.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/vcpu.h"
#include "hyp/vuart.h"
#include "lib/conring.h"
#include "lib/prio.h"
#include "lib/string.h"

/* Priority of the UART input interrupt at the physical GIC. The drain CPU takes every interrupt at EL2
 * with ICC_PMR_EL1 fully open (vgic_cpu_init), so this only orders it among pending ones: mid-range, as
 * the hypervisor's PPIs. */
#define CONMUX_UART_PRIO RTMUX_PRIO_HYP /* waits while the rtos of a CPU it shares runs */

int con_drain_cpu = -1;
struct partition *con_focus;
static uint8_t escape_key;
static bool escape_pending; /* only the drain CPU reads input */

/*
 * The focus view (the blob's BLOB_FLAG_CONSOLE_VIEW; `./rtmux run` asks for it on a terminal): only the
 * focused partition's lines reach the console as they come. The others' are held here, their newest
 * HOLD_SIZE bytes (~160 s of the rtos demo's output), and replayed when that partition gets the focus;
 * every HOLD_STATUS_S seconds the latest held line of each is shown once, marked as a status line, when
 * it differs from the one shown last. So a shell is not interrupted every second, and nothing is lost
 * unless a partition prints more than HOLD_SIZE while in the background (then the oldest lines go, and
 * the replay says how many).
 */
#define HOLD_SIZE     (32u * 1024u)
#define HOLD_STATUS_S 10u
#define STATUS_TEXT   100u /* characters of the latest line a status line shows */

struct hold {
    char buf[HOLD_SIZE]; /* a ring of line bytes, each complete line ended by '\n' */
    uint32_t start, len;
    uint32_t lines, dropped; /* complete lines held, and dropped for room */
    char last[VUART_LINE_SIZE];
    size_t last_len;
    bool fresh; /* a line came since the last status line */
    /* The latest line the last status line showed: a status line repeats nothing. Under icount, guest
     * time runs ~20x wall time while the CPUs idle, and an idle rtos's latest line (its RTD line) stays
     * the same for minutes: shown every 10 s of guest time it filled the screen twice a second. */
    char shown[STATUS_TEXT];
    size_t shown_len;
};

static bool focus_view;
static struct hold held[HYP_MAX_PARTITIONS];
static spinlock_t hold_lock; /* held[]: the drain CPU, and a CPU draining for the last time at power-off */
static unsigned status_ticks;

static void hold_byte(struct hold *h, char c)
{
    while (h->len == HOLD_SIZE) {
        /* full: the oldest line goes (a line is at most VUART_LINE_SIZE bytes, far below HOLD_SIZE) */
        char gone;
        do {
            gone = h->buf[h->start];
            h->start = (h->start + 1u) % HOLD_SIZE;
            h->len--;
        } while (gone != '\n' && h->len > 0);
        h->lines -= gone == '\n' ? 1u : 0u;
        h->dropped++;
    }
    h->buf[(h->start + h->len) % HOLD_SIZE] = c;
    h->len++;
}

/*
 * The virtual CPU the drain in progress runs for (drain lock held), or NULL. On a CPU the rtos shares
 * with Linux the drain goes in steps, DRAIN_STEP characters through the models or one line to the UART
 * (a line of 160 characters, the longest, is ~3 us in icount), and stops before a step when the rtos
 * needs the CPU within DRAIN_GUARD_NS (an interrupt of it pending, or its timer due): the rest waits for
 * the next drain, so the rtos's timer never waits for the console.
 */
static const struct vcpu *drain_for;
#define DRAIN_STEP     32u
#define DRAIN_GUARD_NS 5000u

/*
 * A paced drain (the console tick's, and a Linux write's on the drain CPU) also stops while the
 * console's buffer has less than DRAIN_ROOM free, so a slow UART holds partitions' output back in their
 * own rings and models (whose FIFO then reads full to the guest) instead of filling the buffer: its last
 * quarter stays for the hypervisor's own lines (a stop's reports are ~1,500 characters, a partition's
 * burst of limited lines 16 of ~120), which the console drops rather than wait for the wire
 * (console.c). The drains that must empty a ring now (its close before a wipe, the system's end) are
 * not paced: they go on into that reserve, and what finds no room there is dropped and counted.
 */
static bool drain_paced;
#define DRAIN_ROOM (CON_OUT_SIZE / 4u)

static bool drain_goes_on(void)
{
    if (drain_paced && con_room() < DRAIN_ROOM) {
        return false;
    }
    return drain_for == NULL || !vgic_rtos_soon(drain_for, arch_counter_hz() * DRAIN_GUARD_NS / 1000000000u);
}

static uint32_t drain_step(void)
{
    return drain_for != NULL ? DRAIN_STEP : UINT32_MAX;
}

/* The line sink of every partition's UART model (vuart_drain). */
static bool part_line(void *ctx, const char *s, size_t n, bool complete)
{
    struct partition *p = ctx;
    if (!focus_view || p == con_focus) {
        con_line(p->tag, s, n, complete);
        return drain_goes_on();
    }
    spin_lock(&hold_lock);
    struct hold *h = &held[part_index(p)];
    for (size_t i = 0; i < n; i++) {
        hold_byte(h, s[i]);
    }
    if (complete) {
        hold_byte(h, '\n');
        h->lines++;
        h->last_len = n < sizeof(h->last) ? n : sizeof(h->last);
        memcpy(h->last, s, h->last_len);
        h->fresh = true;
    }
    spin_unlock(&hold_lock);
    return drain_goes_on();
}

/* Shows what p's output held while it was in the background, then forgets it. */
static void hold_replay(struct partition *p)
{
    spin_lock(&hold_lock);
    struct hold *h = &held[part_index(p)];
    if (h->len > 0) {
        hyp_printf("rtmux: %s: %u lines it wrote in the background follow", p->name, h->lines);
        if (h->dropped > 0) {
            hyp_printf(" (%u older ones were dropped: %u KiB are kept)", h->dropped, HOLD_SIZE / 1024u);
        }
        hyp_printf("\n");
        char line[VUART_LINE_SIZE];
        size_t n = 0;
        for (uint32_t i = 0; i < h->len; i++) {
            char c = h->buf[(h->start + i) % HOLD_SIZE];
            if (c == '\n' || n == sizeof(line)) {
                con_line(p->tag, line, n, c == '\n');
                n = 0;
            }
            if (c != '\n') {
                line[n++] = c;
            }
        }
        if (n > 0) {
            con_line(p->tag, line, n, false); /* an unfinished line: a prompt */
        }
    }
    *h = (struct hold){0};
    spin_unlock(&hold_lock);
}

/* Every HOLD_STATUS_S: one marked line per background partition that wrote something since, unless its
 * latest line is the one the previous status line showed. */
static void hold_status(void)
{
    char text[STATUS_TEXT + 64];
    spin_lock(&hold_lock);
    for (unsigned i = 0; i < hyp_nparts; i++) {
        struct hold *h = &held[i];
        if (&hyp_part[i] == con_focus || !h->fresh) {
            continue;
        }
        int len = hyp_snprintf(text, sizeof(text), "(background: %u lines held, Ctrl-%c then %u shows them) ",
                               h->lines, (char)('@' + escape_key), i + 1u);
        size_t room = sizeof(text) - (size_t)len - 1u;
        size_t n = h->last_len < STATUS_TEXT ? h->last_len : STATUS_TEXT;
        n = n < room ? n : room;
        h->fresh = false;
        if (n == h->shown_len && memcmp(h->last, h->shown, n) == 0) {
            continue;
        }
        memcpy(h->shown, h->last, n);
        h->shown_len = n;
        memcpy(text + len, h->last, n);
        con_line(hyp_part[i].tag, text, (size_t)len + n, true);
    }
    spin_unlock(&hold_lock);
}

void conmux_init(unsigned focus, uint8_t escape, bool view)
{
    escape_key = escape;
    focus_view = view;
    con_focus = &hyp_part[focus];
    for (unsigned i = 0; i < hyp_nparts; i++) {
        if (hyp_part[i].kind == PART_LINUX) {
            con_drain_cpu = __builtin_ctzll(hyp_part[i].cpu_mask);
            con_set_paced(true); /* its tick moves on what the UART could not take at once */
            uart_rx_irq_enable();
            gic_spi_route(BOARD_UART_INTID, hyp_vcpu[con_drain_cpu].mpidr, CONMUX_UART_PRIO);
            hyp_printf("rtmux: console input goes to %s; escape (0x%02x) then 1..%u switches partitions\n",
                       con_focus->name, escape_key, hyp_nparts);
            return;
        }
    }
}

/* One CPU at a time moves partitions' output (the consumer side of the console rings and of the UART
 * models): the drain CPU, a partition's CPU closing its ring before a stop or reset (so no ring is read
 * while its RAM is wiped), the last CPU at power-off. */
static spinlock_t drain_lock;

/* Moves what p wrote into its console ring to its UART model's output, as much as that has room for and
 * at most `max` characters (caller holds the drain lock); true when some is left in the ring. The
 * partition is trusted with its ring but its indices are still bounded: at most one ring's worth. */
static bool ring_pull(struct partition *p, uint32_t max)
{
    if (!__atomic_load_n(&p->con.ring_on, __ATOMIC_ACQUIRE)) {
        return false;
    }
    struct conring *r = p->con.ring;
    uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    uint32_t tail = p->con.ring_tail;
    if (head - tail > p->con.ring_size) {
        tail = head - p->con.ring_size; /* a producer past the invariant: keep its newest ring's worth */
    }
    uint32_t room = vuart_tx_room(&p->con.uart);
    for (room = room < max ? room : max; tail != head && room > 0; tail++, room--) {
        vuart_tx_push(&p->con.uart, r->data[tail & (p->con.ring_size - 1u)]);
    }
    p->con.ring_tail = tail;
    __atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
    uint32_t dropped = __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);
    uint32_t lines = __atomic_load_n(&r->dropped_lines, __ATOMIC_RELAXED);
    if (dropped != p->con.dropped) {
        part_printf(p, "rtmux: %s: console ring full, %u lines (%u characters) dropped\n", p->name,
                    lines - p->con.dropped_lines, dropped - p->con.dropped);
        p->con.dropped = dropped;
        p->con.dropped_lines = lines;
    }
    return tail != head;
}

/* p's UART model's output to the console, in steps when the drain runs for a shared CPU; false when it
 * stopped for the rtos. Caller holds the drain lock. */
static bool uart_flush(struct partition *p, enum vuart_drain_mode mode)
{
    bool done = false;
    while (drain_goes_on() && !(done = vuart_drain(&p->con.uart, mode, part_line, p, drain_step()))) {
    }
    uint32_t dropped = vuart_dropped_news(&p->con.uart);
    if (dropped != 0) {
        /* at most one a tick, and through p's line limit: a partition that floods its UART from a CPU
         * other than the console's must not flood the console with these either */
        part_printf(p, "rtmux: %s: %u output characters dropped (console ring full)\n", p->name, dropped);
    }
    return done;
}

/* Empties p's console ring through its UART model (the console ring holds 16 KiB, the model 4: an
 * rtos that prints a long report and stops at once, as the latency app's histogram, must lose none of
 * it), unless the drain stops for the rtos (drain_for); false then. Caller holds the drain lock. */
static bool ring_flush(struct partition *p)
{
    for (;;) {
        if (!drain_goes_on()) {
            return false;
        }
        bool left = ring_pull(p, drain_step());
        if (!uart_flush(p, VUART_DRAIN_LINES)) {
            return false;
        }
        if (!left) {
            return true;
        }
    }
}

void con_ring_close(struct partition *p)
{
    spin_lock(&drain_lock);
    (void)ring_flush(p);
    __atomic_store_n(&p->con.ring_on, false, __ATOMIC_RELEASE);
    spin_unlock(&drain_lock);
}

void con_drain(enum vuart_drain_mode mode, const struct vcpu *v)
{
    con_flush(); /* what waits for the UART first: it came before anything drained now */
    spin_lock(&drain_lock);
    drain_for = v;
    drain_paced = mode != VUART_DRAIN_ALL;
    for (unsigned i = 0; i < hyp_nparts; i++) {
        struct partition *p = &hyp_part[i];
        if ((p->con.ring != NULL && !ring_flush(p)) || !uart_flush(p, mode)) {
            break;
        }
    }
    drain_paced = false;
    drain_for = NULL;
    spin_unlock(&drain_lock);
}

static void rx_char(char c)
{
    if (escape_pending) {
        escape_pending = false;
        if (c >= '1' && c < (char)('1' + hyp_nparts)) {
            con_focus = &hyp_part[c - '1'];
            hyp_printf("\nrtmux: console input now goes to %s\n", con_focus->name);
            hold_replay(con_focus);
            return;
        }
        if (c == 'e') {
            hyp_printf("\n");
            vcpu_report_entries();
            return;
        }
        if (c != (char)escape_key) {
            hyp_printf(
                "\nrtmux: escape then 1..%u chooses the partition that gets input, escape then e shows "
                "the hypervisor's entries per CPU, escape twice sends the escape character\n",
                hyp_nparts);
            return;
        }
    } else if (c == (char)escape_key) {
        escape_pending = true;
        return;
    }
    if (con_focus != NULL && con_focus->state == PART_RUNNING) {
        vuart_rx(&con_focus->con.uart, c);
    }
}

void conmux_rx_irq(struct vcpu *v)
{
    /* Clear the interrupt before draining, then look again: QEMU's PL011 (like a FIFO with trigger
     * level 1) signals only when the FIFO goes from empty to non-empty, so a character that arrived
     * between the last read and a late clear would otherwise sit unnoticed. */
    for (;;) {
        uart_rx_irq_clear();
        if (uart_rx_empty()) {
            break;
        }
        while (!uart_rx_empty()) {
            rx_char(uart_getc());
        }
    }
    if (con_focus != NULL && con_focus->kind == PART_LINUX && con_focus->state == PART_RUNNING) {
        vgic_levels_changed(con_focus, v); /* its UART's line, to the CPU it is routed to */
    }
}

void conmux_tick(struct vcpu *v)
{
    arch_hyp_timer_arm(CONMUX_TICK_HZ); /* level interrupt: the new deadline lowers it */
    con_drain(VUART_DRAIN_TICK, v);
    if (focus_view && ++status_ticks >= CONMUX_TICK_HZ * HOLD_STATUS_S) {
        status_ticks = 0;
        hold_status();
    }
}

/* A partition's UART model is accessed by each of its CPUs: one access at a time (the model's
 * receive ring has a single consumer, its transmit ring a single producer among them). */
static spinlock_t uart_lock[HYP_MAX_PARTITIONS];

bool conmux_uart_mmio(struct vcpu *v, void *ctx, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    struct partition *p = ctx;
    spin_lock(&uart_lock[part_index(p)]);
    bool handled = vuart_access(&p->con.uart, off, write, val, size);
    spin_unlock(&uart_lock[part_index(p)]);
    if (write && off == PL011_DR && (con_drain_cpu < 0 || (unsigned)con_drain_cpu == v->cpu)) {
        con_drain(VUART_DRAIN_LINES, v); /* this CPU is the one that writes to the UART anyway */
    }
    if (p->kind == PART_LINUX) {
        vgic_levels_changed(p, v);
    }
    return handled;
}
