/*
 * Emulated PL011 at the board's UART address, one per partition: enough of the register set for
 * Linux's amba-pl011 driver (including earlycon and AMBA identification) and the rtos driver. Output
 * goes into the partition's ring without waiting for anything; vuart_drain, on the console CPU, turns it
 * into tagged lines, so lines of different partitions never mix and the rtos never waits for the UART
 * or a lock.
 */
#include "hyp/vuart.h"

#include "arm64/pl011.h"
#include "hyp/assert.h"
#include "hyp/console.h"
#include "hyp/printf.h"

/* PrimeCell PL011 r1p5 identification: PeriphID0-3 then PCellID0-3. */
static const uint8_t pl011_id[PL011_ID_WORDS] = {0x11, 0x10, 0x34, 0x00, 0x0d, 0xf0, 0x05, 0xb1};

void vuart_reset(struct vuart *u)
{
    u->cr = PL011_CR_TXE | PL011_CR_RXE; /* as after reset */
    u->imsc = 0;
    u->ris = PL011_INT_TX; /* the transmitter is always ready: output is never throttled */
    u->lcrh = 0;
    u->ibrd = 0;
    u->fbrd = 0;
    u->ifls = PL011_IFLS_RESET;
    u->dmacr = 0;
    u->rx_head = 0;
    u->rx_count = 0;
}

static void put(struct vuart *u, char c)
{
    uint32_t prod = u->tx_prod;
    if (prod - u->tx_cons >= sizeof(u->tx)) {
        u->tx_dropped++;
    } else {
        u->tx[prod % sizeof(u->tx)] = c;
        __atomic_store_n(&u->tx_prod, prod + 1u, __ATOMIC_RELEASE);
    }
}

/* Interrupt status: TX always ready; RX and RX-timeout while characters wait. */
static uint32_t raw_status(const struct vuart *u)
{
    return u->ris | (u->rx_count > 0 ? PL011_INT_RX | PL011_INT_RT : 0u);
}

bool vuart_irq_line(const void *ctx)
{
    const struct vuart *u = ctx;
    return (raw_status(u) & u->imsc) != 0;
}

void vuart_rx(struct vuart *u, char c)
{
    if (u->rx_count < sizeof(u->rx)) {
        u->rx[(u->rx_head + u->rx_count) % sizeof(u->rx)] = (uint8_t)c;
        u->rx_count++;
    }
}

/* A read/write register: a write stores, a read returns the stored value. */
static void reg(uint32_t *r, bool write, uint64_t *val)
{
    if (write) {
        *r = (uint32_t)*val;
    } else {
        *val = *r;
    }
}

bool vuart_access(struct vuart *u, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    (void)size;
    if (off >= PL011_PERIPHID0 && off < PL011_PERIPHID0 + 4u * PL011_ID_WORDS) {
        if (!write) {
            *val = pl011_id[(off - PL011_PERIPHID0) / 4u];
        }
        return true;
    }
    switch (off) {
    case PL011_DR:
        if (write) {
            put(u, (char)(*val & PL011_DR_DATA));
        } else if (u->rx_count > 0) {
            *val = u->rx[u->rx_head];
            u->rx_head = (u->rx_head + 1u) % sizeof(u->rx);
            u->rx_count--;
        } else {
            *val = 0;
        }
        break;
    case PL011_RSR:
    case PL011_ILPR:
        *val = 0;
        break;
    case PL011_FR:
        if (!write) {
            *val = PL011_FR_TXFE | (u->rx_count == 0 ? PL011_FR_RXFE : 0u);
        }
        break;
    case PL011_IBRD:
        reg(&u->ibrd, write, val);
        break;
    case PL011_FBRD:
        reg(&u->fbrd, write, val);
        break;
    case PL011_LCR_H:
        reg(&u->lcrh, write, val);
        break;
    case PL011_CR:
        reg(&u->cr, write, val);
        break;
    case PL011_IFLS:
        reg(&u->ifls, write, val);
        break;
    case PL011_IMSC:
        reg(&u->imsc, write, val);
        break;
    case PL011_RIS:
        if (!write) {
            *val = raw_status(u);
        }
        break;
    case PL011_MIS:
        if (!write) {
            *val = raw_status(u) & u->imsc;
        }
        break;
    case PL011_ICR:
        break; /* TX stays ready; RX clears when the FIFO drains */
    case PL011_DMACR:
        reg(&u->dmacr, write, val);
        break;
    default:
        if (!write) {
            *val = 0;
        }
        break;
    }
    return true;
}

void vuart_drain(struct vuart *u, const char *name, const char *tag, bool flush_partial)
{
    uint32_t prod = __atomic_load_n(&u->tx_prod, __ATOMIC_ACQUIRE);
    uint32_t cons = u->tx_cons;
    HYP_ASSERT(prod - cons <= sizeof(u->tx)); /* the producer never overtakes the consumer */
    bool any = cons != prod;
    for (; cons != prod; cons++) {
        char c = u->tx[cons % sizeof(u->tx)];
        if (c == '\r') {
            continue; /* the console adds CR before LF */
        }
        if (c == '\n') {
            con_line(tag, u->line, u->line_len, true);
            u->line_len = 0;
            continue;
        }
        u->line[u->line_len++] = c;
        if (u->line_len == sizeof(u->line)) {
            con_line(tag, u->line, u->line_len, false);
            u->line_len = 0;
        }
    }
    __atomic_store_n(&u->tx_cons, cons, __ATOMIC_RELEASE);
    u->quiet_ticks = any ? 0 : u->quiet_ticks + 1;
    if (flush_partial && u->line_len > 0 && u->quiet_ticks >= 1) {
        con_line(tag, u->line, u->line_len, false); /* a prompt: show it without its newline */
        u->line_len = 0;
    }
    uint32_t dropped = u->tx_dropped;
    if (dropped != u->dropped_reported) {
        hyp_printf("rtmux: %s: %u output characters dropped (console ring full)\n", name,
                   dropped - u->dropped_reported);
        u->dropped_reported = dropped;
    }
}
