/*
 * The physical PL011, owned by the hypervisor and shared by every CPU under one lock. Partitions write
 * to their own emulated PL011 (vuart.c), which ends up here, one tagged line at a time.
 */
#include <stdarg.h>

#include "board.h"
#include "hyp/config.h"
#include "hyp/hyp.h"
#include "lib/fmt.h"
#include "lib/string.h"

#define UARTDR      0x000u
#define UARTFR      0x018u
#define UARTFR_TXFF (1u << 5)
#define UARTCR      0x030u
#define UARTIMSC    0x038u
#define UARTICR     0x044u
#define UARTFR_RXFE (1u << 4)
#define UART_RXIM   (1u << 4)
#define UART_RTIM   (1u << 6)

struct partition *con_focus;
static bool escape_pending;

static spinlock_t con_lock;

static inline volatile uint32_t *uart(uintptr_t off)
{
    return (volatile uint32_t *)(BOARD_UART_BASE + off);
}

void con_init(void)
{
    *uart(UARTIMSC) = 0;
    *uart(UARTCR) |= 0x301u; /* UARTEN | TXE | RXE */
}

void con_putc(char c)
{
    while (*uart(UARTFR) & UARTFR_TXFF) {
    }
    *uart(UARTDR) = (uint32_t)(unsigned char)c;
}

/* Partition whose output line is open on the console (printed without its newline yet), or NULL. */
static const struct partition *open_owner;

static void emit(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n') {
            con_putc('\r');
        }
        con_putc(s[i]);
    }
}

void con_write(const char *s, size_t n)
{
    spin_lock(&con_lock);
    if (open_owner != NULL) {
        emit("\n", 1);
        open_owner = NULL;
    }
    emit(s, n);
    spin_unlock(&con_lock);
}

void con_partition_out(const struct partition *p, const char *s, size_t n, bool complete)
{
    spin_lock(&con_lock);
    if (open_owner != NULL && open_owner != p) {
        emit("\n", 1); /* another partition's unfinished line (a prompt): end it on screen */
        open_owner = NULL;
    }
    if (open_owner != p && config_console_tags) {
        emit("[", 1);
        emit(p->tag, strlen(p->tag));
        emit("] ", 2);
    }
    emit(s, n);
    if (complete) {
        emit("\n", 1);
    }
    open_owner = complete ? NULL : p;
    spin_unlock(&con_lock);
}

void con_rx_enable(uint64_t cpu_affinity)
{
    *uart(UARTIMSC) = UART_RXIM | UART_RTIM;
    volatile uint8_t *prio = (volatile uint8_t *)(BOARD_GICD_BASE + 0x400u + BOARD_UART_INTID);
    *prio = 0x80u;
    *(volatile uint64_t *)(BOARD_GICD_BASE + 0x6000u + BOARD_UART_INTID * 8u) = cpu_affinity;
    *(volatile uint32_t *)(BOARD_GICD_BASE + 0x100u + (BOARD_UART_INTID / 32u) * 4u) =
        1u << (BOARD_UART_INTID % 32u);
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
        if (c != (char)config_console_escape) {
            hyp_printf("\nrtmux: escape then 1..%u chooses the partition that gets input; escape twice "
                       "sends the escape character\n",
                       hyp_nparts);
            return;
        }
    } else if (c == (char)config_console_escape) {
        escape_pending = true;
        return;
    }
    if (con_focus != NULL && con_focus->state == PART_RUNNING) {
        vuart_rx(con_focus, c);
    }
}

void con_rx_irq(void)
{
    /* Clear the interrupt before draining, then look again: QEMU's PL011 (like a FIFO with trigger
     * level 1) signals only when the FIFO goes from empty to non-empty, so a character that arrived
     * between the last read and a late clear would otherwise sit unnoticed. */
    for (;;) {
        *uart(UARTICR) = UART_RXIM | UART_RTIM;
        if (*uart(UARTFR) & UARTFR_RXFE) {
            return;
        }
        while (!(*uart(UARTFR) & UARTFR_RXFE)) {
            rx_char((char)(*uart(UARTDR) & 0xffu));
        }
    }
}

int con_drain_cpu = -1;

/* Moves one partition's ring into tagged lines. Caller holds no lock; con_partition_out takes it. */
static void drain_one(struct partition *p, bool flush_partial)
{
    struct vuart *u = &p->uart;
    uint32_t prod = __atomic_load_n(&u->tx_prod, __ATOMIC_ACQUIRE);
    uint32_t cons = u->tx_cons;
    bool any = cons != prod;
    for (; cons != prod; cons++) {
        char c = u->tx[cons % sizeof(u->tx)];
        if (c == '\r') {
            continue; /* emit() adds CR before LF */
        }
        if (c == '\n') {
            con_partition_out(p, u->line, u->line_len, true);
            u->line_len = 0;
            continue;
        }
        u->line[u->line_len++] = c;
        if (u->line_len == sizeof(u->line)) {
            con_partition_out(p, u->line, u->line_len, false);
            u->line_len = 0;
        }
    }
    __atomic_store_n(&u->tx_cons, cons, __ATOMIC_RELEASE);
    u->quiet_ticks = any ? 0 : u->quiet_ticks + 1;
    if (flush_partial && u->line_len > 0 && u->quiet_ticks >= 1) {
        con_partition_out(p, u->line, u->line_len, false); /* a prompt: show it without its newline */
        u->line_len = 0;
    }
    uint32_t dropped = u->tx_dropped;
    if (dropped != u->dropped_reported) {
        hyp_printf("rtmux: %s: %u output characters dropped (console ring full)\n", p->name,
                   dropped - u->dropped_reported);
        u->dropped_reported = dropped;
    }
}

void con_drain(bool flush_partial)
{
    for (unsigned i = 0; i < hyp_nparts; i++) {
        drain_one(&hyp_part[i], flush_partial);
    }
}

int hyp_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

/* Formats into a line buffer and writes it with `prefix` in front; returns the formatted length. */
static int vprint(const char *prefix, const char *fmt, va_list ap)
{
    char buf[256];
    size_t p = strlen(prefix);
    int n = fmt_vsnprintf(buf + p, sizeof(buf) - p, fmt, ap);
    memcpy(buf, prefix, p);
    size_t len = p + ((size_t)n < sizeof(buf) - p ? (size_t)n : sizeof(buf) - p - 1);
    con_write(buf, len);
    return n;
}

int hyp_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vprint("", fmt, ap);
    va_end(ap);
    return n;
}

void hyp_panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vprint("rtmux: PANIC: ", fmt, ap);
    va_end(ap);
    con_write("\nrtmux: system off\n", 19);
    psci_fw_system_off();
}

void spin_lock(spinlock_t *l)
{
    uint32_t tmp, one = 1;
    __asm__ volatile("sevl\n"
                     "1: wfe\n"
                     "2: ldaxr %w0, [%1]\n"
                     "cbnz %w0, 1b\n"
                     "stxr %w0, %w2, [%1]\n"
                     "cbnz %w0, 2b\n"
                     : "=&r"(tmp)
                     : "r"(&l->v), "r"(one)
                     : "memory");
}

void spin_unlock(spinlock_t *l)
{
    __asm__ volatile("stlr wzr, [%0]" : : "r"(&l->v) : "memory");
}
