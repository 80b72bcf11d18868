/*
 * Emulated PL011 at the board's UART address, one per partition: enough of the register set for
 * Linux's amba-pl011 driver (including earlycon and AMBA identification) and the rtos driver. Output
 * goes into the partition's ring without waiting for anything; core/console.c writes it out as tagged
 * lines, so lines of different partitions never mix and the rtos never waits for the UART or a lock.
 */
#include "hyp/config.h"
#include "hyp/hyp.h"

#define UARTDR        0x000u
#define UARTRSR       0x004u
#define UARTFR        0x018u
#define UARTILPR      0x020u
#define UARTIBRD      0x024u
#define UARTFBRD      0x028u
#define UARTLCR_H     0x02cu
#define UARTCR        0x030u
#define UARTIFLS      0x034u
#define UARTIMSC      0x038u
#define UARTRIS       0x03cu
#define UARTMIS       0x040u
#define UARTICR       0x044u
#define UARTDMACR     0x048u
#define UARTPERIPHID0 0xfe0u

#define FR_RXFE (1u << 4)
#define FR_TXFE (1u << 7)
#define INT_RX  (1u << 4)
#define INT_TX  (1u << 5)
#define INT_RT  (1u << 6)

/* PrimeCell PL011 r1p5 identification: PeriphID0-3 then PCellID0-3. */
static const uint8_t pl011_id[8] = {0x11, 0x10, 0x34, 0x00, 0x0d, 0xf0, 0x05, 0xb1};

void vuart_reset(struct partition *p)
{
    struct vuart *u = &p->uart;
    u->cr = 0x300; /* TXE | RXE, as after reset */
    u->imsc = 0;
    u->ris = INT_TX; /* the transmitter is always ready: output is never throttled */
    u->lcrh = 0;
    u->ibrd = 0;
    u->fbrd = 0;
    u->ifls = 0x12;
    u->dmacr = 0;
    u->rx_head = 0;
    u->rx_count = 0;
}

static void put(struct vcpu *v, char c)
{
    struct vuart *u = &v->part->uart;
    uint32_t prod = u->tx_prod;
    if (prod - u->tx_cons >= sizeof(u->tx)) {
        u->tx_dropped++;
    } else {
        u->tx[prod % sizeof(u->tx)] = c;
        __atomic_store_n(&u->tx_prod, prod + 1u, __ATOMIC_RELEASE);
    }
    if (con_drain_cpu < 0 || (unsigned)con_drain_cpu == v->cpu) {
        con_drain(false); /* this CPU is the one that writes to the UART anyway */
    }
}

/* Interrupt status: TX always ready; RX and RX-timeout while characters wait. */
static uint32_t raw_status(const struct vuart *u)
{
    return u->ris | (u->rx_count > 0 ? INT_RX | INT_RT : 0u);
}

bool vuart_irq_line(const struct partition *p)
{
    return (raw_status(&p->uart) & p->uart.imsc) != 0;
}

void vuart_rx(struct partition *p, char c)
{
    struct vuart *u = &p->uart;
    if (u->rx_count < sizeof(u->rx)) {
        u->rx[(u->rx_head + u->rx_count) % sizeof(u->rx)] = (uint8_t)c;
        u->rx_count++;
    }
}

bool vuart_access(struct vcpu *v, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    struct vuart *u = &v->part->uart;
    (void)size;
    if (off >= UARTPERIPHID0 && off < UARTPERIPHID0 + 32u) {
        if (!write) {
            *val = pl011_id[(off - UARTPERIPHID0) / 4u];
        }
        return true;
    }
    uint32_t w = (uint32_t)*val;
    switch (off) {
    case UARTDR:
        if (write) {
            put(v, (char)(w & 0xffu));
        } else if (u->rx_count > 0) {
            *val = u->rx[u->rx_head];
            u->rx_head = (u->rx_head + 1u) % sizeof(u->rx);
            u->rx_count--;
        } else {
            *val = 0;
        }
        break;
    case UARTRSR:
        *val = 0;
        break;
    case UARTFR:
        if (!write) {
            *val = FR_TXFE | (u->rx_count == 0 ? FR_RXFE : 0u);
        }
        break;
    case UARTILPR:
        *val = 0;
        break;
    case UARTIBRD:
        write ? (void)(u->ibrd = w) : (void)(*val = u->ibrd);
        break;
    case UARTFBRD:
        write ? (void)(u->fbrd = w) : (void)(*val = u->fbrd);
        break;
    case UARTLCR_H:
        write ? (void)(u->lcrh = w) : (void)(*val = u->lcrh);
        break;
    case UARTCR:
        write ? (void)(u->cr = w) : (void)(*val = u->cr);
        break;
    case UARTIFLS:
        write ? (void)(u->ifls = w) : (void)(*val = u->ifls);
        break;
    case UARTIMSC:
        write ? (void)(u->imsc = w) : (void)(*val = u->imsc);
        break;
    case UARTRIS:
        if (!write) {
            *val = raw_status(u);
        }
        break;
    case UARTMIS:
        if (!write) {
            *val = raw_status(u) & u->imsc;
        }
        break;
    case UARTICR:
        break; /* TX stays ready; RX clears when the FIFO drains */
    case UARTDMACR:
        write ? (void)(u->dmacr = w) : (void)(*val = u->dmacr);
        break;
    default:
        if (!write) {
            *val = 0;
        }
        break;
    }
    return true;
}
