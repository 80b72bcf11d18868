/*
 * Emulated PL011 at the board's UART address, one per partition: enough of the register set for
 * Linux's amba-pl011 driver (including earlycon and AMBA identification) and the rtos driver. Output
 * goes into the partition's ring without waiting for anything; vuart_drain, on the console CPU, turns it
 * into tagged lines, so lines of different partitions never mix and the rtos never waits for the UART
 * or a lock. Input arrives on the console CPU (vuart_rx) and is read on the partition's CPU (UARTDR): a
 * second ring, with the roles the other way round.
 *
 * Access policy: a register is reached by a 1, 2 or 4-byte access at its offset (a multiple of 4);
 * a read returns the register's low 8n bits, a write replaces them (the other bits are kept) and the
 * register keeps only the bits it has (its width, below). Any other access (8 bytes, or not at the
 * start of a register word) reads as zero and is ignored, like the PL011's reserved space.
 */
#include "hyp/vuart.h"

#include "arm64/pl011.h"
#include "hyp/assert.h"
#include "hyp/printf.h"

/* PrimeCell PL011 r1p5 identification: PeriphID0-3 then PCellID0-3. */
static const uint8_t pl011_id[PL011_ID_WORDS] = {0x11, 0x10, 0x34, 0x00, 0x0d, 0xf0, 0x05, 0xb1};

/* The implemented bits of the read/write registers (DDI 0183 r1p5, 3.3); the rest read as zero. */
#define WIDTH_IBRD  0xffffu
#define WIDTH_FBRD  0x3fu
#define WIDTH_LCR_H 0xffu
#define WIDTH_CR    0xffffu
#define WIDTH_IFLS  0x3fu
#define WIDTH_IMSC  0x7ffu
#define WIDTH_DMACR 0x7u

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
    /* Pending input is dropped: as the ring's consumer (this runs on the partition's CPU, or before it
     * starts), by catching up with the producer. */
    __atomic_store_n(&u->rx_cons, __atomic_load_n(&u->rx_prod, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
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

void vuart_tx_push(struct vuart *u, char c)
{
    put(u, c);
}

uint32_t vuart_tx_room(const struct vuart *u)
{
    return (uint32_t)sizeof(u->tx) - (u->tx_prod - __atomic_load_n(&u->tx_cons, __ATOMIC_ACQUIRE));
}

static bool rx_empty(const struct vuart *u)
{
    return __atomic_load_n(&u->rx_prod, __ATOMIC_ACQUIRE) == __atomic_load_n(&u->rx_cons, __ATOMIC_RELAXED);
}

/* Interrupt status: TX always ready; RX and RX-timeout while characters wait. */
static uint32_t raw_status(const struct vuart *u)
{
    return u->ris | (rx_empty(u) ? 0u : PL011_INT_RX | PL011_INT_RT);
}

bool vuart_irq_line(const void *ctx)
{
    const struct vuart *u = ctx;
    return (raw_status(u) & u->imsc) != 0;
}

/* The producer's side of the receive ring (invariant in vuart.h). */
bool vuart_rx(struct vuart *u, char c)
{
    uint32_t prod = u->rx_prod;
    if (prod - __atomic_load_n(&u->rx_cons, __ATOMIC_ACQUIRE) >= VUART_RX_SIZE) {
        return false;
    }
    u->rx[prod % VUART_RX_SIZE] = (uint8_t)c;
    __atomic_store_n(&u->rx_prod, prod + 1u, __ATOMIC_RELEASE);
    return true;
}

/* The consumer's side: the next character, or 0 when none waits (a PL011 reads 0 from an empty FIFO). */
static uint32_t rx_take(struct vuart *u)
{
    uint32_t cons = u->rx_cons;
    if (__atomic_load_n(&u->rx_prod, __ATOMIC_ACQUIRE) == cons) {
        return 0;
    }
    uint8_t c = u->rx[cons % VUART_RX_SIZE];
    __atomic_store_n(&u->rx_cons, cons + 1u, __ATOMIC_RELEASE);
    return c;
}

/* A read/write register of `width` bits: the access's `mask` selects the bits it carries. */
static void reg(uint32_t *r, uint32_t width, bool write, uint64_t *val, uint32_t mask)
{
    if (write) {
        *r = ((*r & ~mask) | ((uint32_t)*val & mask)) & width;
    } else {
        *val = *r;
    }
}

/* The register at off (a multiple of 4); mask covers the bytes the access carries. */
static void access_reg(struct vuart *u, uint64_t off, bool write, uint64_t *val, uint32_t mask)
{
    if (off >= PL011_PERIPHID0 && off < PL011_PERIPHID0 + 4u * PL011_ID_WORDS) {
        if (!write) {
            *val = pl011_id[(off - PL011_PERIPHID0) / 4u];
        }
        return;
    }
    switch (off) {
    case PL011_DR:
        if (write) {
            put(u, (char)(*val & PL011_DR_DATA));
        } else {
            *val = rx_take(u);
        }
        break;
    case PL011_FR:
        if (!write) {
            *val = PL011_FR_TXFE | (rx_empty(u) ? PL011_FR_RXFE : 0u);
        }
        break;
    case PL011_IBRD:
        reg(&u->ibrd, WIDTH_IBRD, write, val, mask);
        break;
    case PL011_FBRD:
        reg(&u->fbrd, WIDTH_FBRD, write, val, mask);
        break;
    case PL011_LCR_H:
        reg(&u->lcrh, WIDTH_LCR_H, write, val, mask);
        break;
    case PL011_CR:
        reg(&u->cr, WIDTH_CR, write, val, mask);
        break;
    case PL011_IFLS:
        reg(&u->ifls, WIDTH_IFLS, write, val, mask);
        break;
    case PL011_IMSC:
        reg(&u->imsc, WIDTH_IMSC, write, val, mask);
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
    case PL011_DMACR:
        reg(&u->dmacr, WIDTH_DMACR, write, val, mask);
        break;
    default:
        break; /* RSR/ECR, ILPR, ICR (TX stays ready; RX clears when the FIFO drains), reserved: RAZ/WI */
    }
}

bool vuart_access(struct vuart *u, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    uint32_t mask = size == 1 ? 0xffu : size == 2 ? 0xffffu : size == 4 ? 0xffffffffu : 0u;
    uint64_t v = write ? *val & mask : 0;
    if (mask != 0 && off % 4u == 0) {
        access_reg(u, off, write, &v, mask);
    }
    if (!write) {
        *val = v & mask;
    }
    return true;
}

bool vuart_drain(struct vuart *u, enum vuart_drain_mode mode, vuart_line_fn line, void *ctx, uint32_t max)
{
    uint32_t prod = __atomic_load_n(&u->tx_prod, __ATOMIC_ACQUIRE);
    uint32_t cons = u->tx_cons;
    HYP_ASSERT(prod - cons <= sizeof(u->tx)); /* the producer never overtakes the consumer */
    uint32_t end = prod - cons > max ? cons + max : prod;
    bool any = cons != prod, more = true;
    for (; cons != end && more; cons++) {
        char c = u->tx[cons % sizeof(u->tx)];
        if (c == '\r') {
            continue; /* the console adds CR before LF */
        }
        if (c == '\n') {
            more = line(ctx, u->line, u->line_len, true);
            u->line_len = 0;
            continue;
        }
        u->line[u->line_len++] = c;
        if (u->line_len == sizeof(u->line)) {
            more = line(ctx, u->line, u->line_len, false);
            u->line_len = 0;
        }
    }
    __atomic_store_n(&u->tx_cons, cons, __ATOMIC_RELEASE);
    u->wrote = u->wrote || any;
    /* Stopped early: output is still waiting, so an unfinished line is not a silent prompt yet. */
    bool all = more && cons == prod;
    bool flush = all && mode == VUART_DRAIN_ALL;
    if (all && mode == VUART_DRAIN_TICK) {
        flush = !u->wrote;
        u->wrote = false;
    }
    if (flush && u->line_len > 0) {
        (void)line(ctx, u->line, u->line_len, false); /* a prompt: show it without its newline */
        u->line_len = 0;
    }
    return all;
}

uint32_t vuart_dropped_news(struct vuart *u)
{
    uint32_t dropped = __atomic_load_n(&u->tx_dropped, __ATOMIC_RELAXED);
    uint32_t n = dropped - u->dropped_reported;
    u->dropped_reported = dropped;
    return n;
}
