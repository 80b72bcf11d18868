/*
 * The i.MX UART drivers, the hypervisor's (hyp/drivers/imx_uart.c) and the rtos's
 * (rtos/drivers/imx_uart.c), against a model of the UART's register file. Both are compiled with
 * IMX_UART_MODEL, so their every register access (arm64/imx_uart.h's accessor) comes here. The model
 * has the 32-character TX and RX FIFOs with the flags that follow them (UTS.TXFULL/TXEMPTY/RXEMPTY,
 * USR1.RRDY/TRDY at the trigger levels, USR2.RDR/TXFE/TXDC), URXD's CHARRDY and error bits, the
 * interrupt enables and the line they drive, a software reset that clears the baud rate registers (as
 * the reference manual says SRST does), and a wire that takes characters out of the TX FIFO when the
 * test lets time pass. It counts what a driver must never do: write a full or disabled TX FIFO, leave
 * the receiver off, read an empty RX FIFO, reset the UART, write the baud rate registers, touch a
 * register the model does not have.
 *
 * The UART starts as U-Boot's driver leaves it (8 bits, RTS ignored, UART, receiver and transmitter on,
 * RFDIV 4, UBIR 15 and a UBMR) with trigger levels and interrupt enables an earlier owner might have
 * left (RXTL 8, TXTL 2; TX, RX, overrun, framing and aging interrupts on), which the drivers must undo.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arm64/imx_uart.h"
#include "board.h"
#include "check.h"
#include "drivers/uart.h"

/* The rtos's driver, compiled with its functions renamed (the Makefile: both images name theirs
 * uart_*). */
void rtos_uart_init(void);
void rtos_uart_putc(char c);

#define DEPTH      IMX_UART_FIFO_DEPTH
#define WIRE_SIZE  4096u
#define POLL_LIMIT 100000u /* consecutive UTS reads without a character going out: the driver hangs */

/* Not used by the drivers, so not in arm64/imx_uart.h: the parts of the firmware's state the test
 * checks are kept. */
#define UCR3_MODEM_OUTPUTS 0x0700u     /* DSR, DCD, RI (U-Boot sets them) */
#define UCR4_CTSTL_32      (32u << 10) /* CTS trigger level */
#define UFCR_RFDIV_4       (4u << 7)   /* reference clock divided by 2 */
#define UFCR_TXTL(n)       ((uint32_t)(n) << 10)
#define FW_UBIR            0x000fu
#define FW_UBMR            0x015bu /* 115200 baud from an 80 MHz reference: any value would do */

static struct {
    uint32_t ucr1, ucr2, ucr3, ucr4, ufcr, ubir, ubmr, uesc, utim;
    uint32_t usr2_ore; /* the latched overrun flag (write 1 to clear) */
    uint8_t tx[DEPTH]; /* TX FIFO: tx_n characters from tx_head */
    unsigned tx_head, tx_n;
    uint32_t rx[DEPTH]; /* RX FIFO: data and error bits of each character */
    unsigned rx_head, rx_n;
    char wire[WIRE_SIZE]; /* what has left the UART, in order */
    size_t wire_n;
    bool time_passes;    /* each poll that finds the TX FIFO full lets the wire take one character */
    unsigned full_polls; /* UTS reads that found TXFULL */
    unsigned idle_polls; /* UTS reads since the last UTXD write */
    /* What a driver must never do. */
    unsigned resets, baud_writes, tx_lost, tx_disabled, rx_off, rx_empty_reads, unknown;
} m;

static void model_firmware_state(void)
{
    memset(&m, 0, sizeof(m));
    m.ucr1 = IMX_UCR1_UARTEN | IMX_UCR1_TRDYEN | IMX_UCR1_TXMPTYEN; /* left on by an earlier owner */
    m.ucr2 = IMX_UCR2_SRST | IMX_UCR2_RXEN | IMX_UCR2_TXEN | IMX_UCR2_WS | IMX_UCR2_IRTS | IMX_UCR2_ATEN;
    m.ucr3 = IMX_UCR3_RXDMUXSEL | UCR3_MODEM_OUTPUTS | IMX_UCR3_FRAERREN;
    m.ucr4 = UCR4_CTSTL_32 | IMX_UCR4_DREN | IMX_UCR4_TCEN | IMX_UCR4_OREN;
    m.ufcr = UFCR_RFDIV_4 | UFCR_TXTL(2) | 8u; /* RXTL 8: one character would not raise RRDY */
    m.ubir = FW_UBIR;
    m.ubmr = FW_UBMR;
}

static bool tx_on(void)
{
    return (m.ucr1 & IMX_UCR1_UARTEN) && (m.ucr2 & IMX_UCR2_TXEN);
}

static unsigned rxtl(void)
{
    unsigned t = m.ufcr & IMX_UFCR_RXTL_MASK;
    return t == 0 ? 1u : t; /* the model's reading of 0; the drivers set 1 */
}

static uint32_t usr1(void)
{
    uint32_t v = 0;
    if (m.rx_n >= rxtl()) {
        v |= IMX_USR1_RRDY;
    }
    if (m.tx_n < ((m.ufcr & IMX_UFCR_TXTL_MASK) >> 10)) {
        v |= IMX_USR1_TRDY;
    }
    return v;
}

static uint32_t usr2(void)
{
    uint32_t v = m.usr2_ore;
    if (m.rx_n > 0) {
        v |= IMX_USR2_RDR;
    }
    if (m.tx_n == 0) {
        v |= IMX_USR2_TXFE | IMX_USR2_TXDC; /* the shift register is never busy in the model */
    }
    return v;
}

static uint32_t uts(void)
{
    uint32_t v = 0;
    v |= m.tx_n == DEPTH ? IMX_UTS_TXFULL : 0u;
    v |= m.tx_n == 0 ? IMX_UTS_TXEMPTY : 0u;
    v |= m.rx_n == 0 ? IMX_UTS_RXEMPTY : 0u;
    return v;
}

/* The UART's interrupt line: any enabled source whose condition holds. */
static bool line(void)
{
    uint32_t s1 = usr1(), s2 = usr2();
    return ((m.ucr1 & IMX_UCR1_RRDYEN) && (s1 & IMX_USR1_RRDY)) ||
           ((m.ucr1 & IMX_UCR1_TRDYEN) && (s1 & IMX_USR1_TRDY)) ||
           ((m.ucr1 & IMX_UCR1_TXMPTYEN) && (s2 & IMX_USR2_TXFE)) ||
           ((m.ucr4 & IMX_UCR4_DREN) && (s2 & IMX_USR2_RDR)) ||
           ((m.ucr4 & IMX_UCR4_TCEN) && (s2 & IMX_USR2_TXDC)) ||
           ((m.ucr4 & IMX_UCR4_OREN) && (s2 & IMX_USR2_ORE));
}

/* The wire takes up to n characters from the TX FIFO. */
static void wire_takes(unsigned n)
{
    while (n-- > 0 && m.tx_n > 0) {
        m.wire[m.wire_n++] = (char)m.tx[m.tx_head];
        m.tx_head = (m.tx_head + 1u) % DEPTH;
        m.tx_n--;
    }
}

/* A character arrives on the receive pin, with URXD error bits `err`. A receiver that is off does not
 * see it; a full FIFO loses it (overrun). */
static void line_receives(char c, uint32_t err)
{
    if (!(m.ucr1 & IMX_UCR1_UARTEN) || !(m.ucr2 & IMX_UCR2_RXEN) || !(m.ucr3 & IMX_UCR3_RXDMUXSEL)) {
        m.rx_off++;
        return;
    }
    if (m.rx_n == DEPTH) {
        m.usr2_ore = IMX_USR2_ORE;
        return;
    }
    m.rx[(m.rx_head + m.rx_n) % DEPTH] = (uint8_t)c | err;
    m.rx_n++;
}

static void reset(void)
{
    m.resets++;
    m.ubir = 0;
    m.ubmr = 0;
    m.tx_n = m.rx_n = 0;
    m.usr2_ore = 0;
}

uint32_t imx_uart_read(uintptr_t base, uint32_t off)
{
    if (base != BOARD_UART_BASE) {
        m.unknown++;
        return 0;
    }
    switch (off) {
    case IMX_URXD: {
        if (m.rx_n == 0 || !(m.ucr2 & IMX_UCR2_RXEN)) {
            m.rx_empty_reads++;
            return 0; /* CHARRDY clear */
        }
        uint32_t v = IMX_URXD_CHARRDY | m.rx[m.rx_head];
        m.rx_head = (m.rx_head + 1u) % DEPTH;
        m.rx_n--;
        return v;
    }
    case IMX_UTXD:
        return 0;
    case IMX_UCR1:
        return m.ucr1;
    case IMX_UCR2:
        return m.ucr2;
    case IMX_UCR3:
        return m.ucr3;
    case IMX_UCR4:
        return m.ucr4;
    case IMX_UFCR:
        return m.ufcr;
    case IMX_USR1:
        return usr1();
    case IMX_USR2:
        return usr2();
    case IMX_UESC:
        return m.uesc;
    case IMX_UTIM:
        return m.utim;
    case IMX_UBIR:
        return m.ubir;
    case IMX_UBMR:
        return m.ubmr;
    case IMX_UTS: {
        uint32_t v = uts();
        if (++m.idle_polls > POLL_LIMIT) {
            fprintf(stderr, "test_imx_uart: the driver polls UTS without end (TX FIFO %u/%u)\n", m.tx_n,
                    DEPTH);
            exit(1);
        }
        if (v & IMX_UTS_TXFULL) {
            m.full_polls++;
            if (m.time_passes) {
                wire_takes(1); /* full at this poll; the next one finds room */
            }
        }
        return v;
    }
    default:
        m.unknown++;
        return 0;
    }
}

void imx_uart_write(uintptr_t base, uint32_t off, uint32_t val)
{
    if (base != BOARD_UART_BASE) {
        m.unknown++;
        return;
    }
    switch (off) {
    case IMX_UTXD:
        m.idle_polls = 0;
        if (!tx_on()) {
            m.tx_disabled++;
        } else if (m.tx_n == DEPTH) {
            m.tx_lost++;
        } else {
            m.tx[(m.tx_head + m.tx_n) % DEPTH] = (uint8_t)val;
            m.tx_n++;
        }
        return;
    case IMX_UCR1:
        m.ucr1 = val & 0xffffu;
        return;
    case IMX_UCR2:
        if (!(val & IMX_UCR2_SRST)) {
            reset();
        }
        m.ucr2 = (val & 0xffffu) | IMX_UCR2_SRST; /* the reset is over at once */
        return;
    case IMX_UCR3:
        m.ucr3 = val & 0xffffu;
        return;
    case IMX_UCR4:
        m.ucr4 = val & 0xffffu;
        return;
    case IMX_UFCR:
        m.ufcr = val & 0xffffu;
        return;
    case IMX_USR1:
        return; /* its latched flags are not modelled; RRDY and TRDY are levels */
    case IMX_USR2:
        m.usr2_ore &= ~(val & IMX_USR2_ORE);
        return;
    case IMX_UBIR:
        m.baud_writes++;
        m.ubir = val & 0xffffu;
        return;
    case IMX_UBMR:
        m.baud_writes++;
        m.ubmr = val & 0xffffu;
        return;
    default:
        m.unknown++;
        return;
    }
}

/* What a driver must never do, and the firmware's baud rate as it was. */
static void check_clean(void)
{
    CHECK(m.resets == 0);
    CHECK(m.baud_writes == 0);
    CHECK(m.ubir == FW_UBIR && m.ubmr == FW_UBMR);
    CHECK((m.ufcr & IMX_UFCR_RFDIV) == UFCR_RFDIV_4);
    CHECK(m.tx_lost == 0);
    CHECK(m.tx_disabled == 0);
    CHECK(m.rx_off == 0);
    CHECK(m.rx_empty_reads == 0);
    CHECK(m.unknown == 0);
}

static void test_hyp_init(void)
{
    model_firmware_state();
    uint32_t ufcr = m.ufcr;
    uart_init();
    /* On: the UART, both directions, the receiver's input. */
    CHECK(m.ucr1 & IMX_UCR1_UARTEN);
    CHECK((m.ucr2 & (IMX_UCR2_TXEN | IMX_UCR2_RXEN)) == (IMX_UCR2_TXEN | IMX_UCR2_RXEN));
    CHECK(m.ucr3 & IMX_UCR3_RXDMUXSEL);
    /* Off: every interrupt source, so no line with the TX FIFO empty (TRDY, TXFE, TXDC hold). */
    CHECK((m.ucr1 & IMX_UCR1_IRQS) == 0 && (m.ucr2 & IMX_UCR2_IRQS) == 0);
    CHECK((m.ucr3 & IMX_UCR3_IRQS) == 0 && (m.ucr4 & IMX_UCR4_IRQS) == 0);
    CHECK(!line());
    /* Kept: the line format, flow control, the modem outputs, the FIFO control, the baud rate. */
    CHECK((m.ucr2 & (IMX_UCR2_WS | IMX_UCR2_IRTS)) == (IMX_UCR2_WS | IMX_UCR2_IRTS));
    CHECK((m.ucr3 & UCR3_MODEM_OUTPUTS) == UCR3_MODEM_OUTPUTS);
    CHECK((m.ucr4 & UCR4_CTSTL_32) == UCR4_CTSTL_32);
    CHECK(m.ufcr == ufcr);
    check_clean();

    /* A firmware that left the UART, or its receiver, off: init turns on what the console uses. */
    model_firmware_state();
    m.ucr1 &= ~IMX_UCR1_UARTEN;
    m.ucr2 &= ~(IMX_UCR2_TXEN | IMX_UCR2_RXEN);
    m.ucr3 &= ~IMX_UCR3_RXDMUXSEL;
    uart_init();
    CHECK(m.ucr1 & IMX_UCR1_UARTEN);
    CHECK((m.ucr2 & (IMX_UCR2_TXEN | IMX_UCR2_RXEN)) == (IMX_UCR2_TXEN | IMX_UCR2_RXEN));
    CHECK(m.ucr3 & IMX_UCR3_RXDMUXSEL);
    check_clean();
}

static void test_hyp_transmit(void)
{
    static const char text[] = "rtmux: the hypervisor's console on the i.MX UART, in order\n";
    const size_t n = sizeof(text) - 1u;
    _Static_assert(sizeof(text) - 1u > IMX_UART_FIFO_DEPTH, "the text fills the FIFO");

    /* No time passes: the FIFO takes 32 characters, then tx_full says so. */
    CHECK(!uart_tx_full());
    size_t i = 0;
    for (; i <= DEPTH && !uart_tx_full(); i++) { /* bounded: a driver that never says full fails */
        uart_tx(text[i]);
    }
    CHECK(i == DEPTH && m.tx_n == DEPTH && m.wire_n == 0);
    CHECK(uart_tx_full()); /* still full: nothing went out */
    wire_takes(1);
    CHECK(!uart_tx_full()); /* room for one */
    uart_tx(text[i++]);
    CHECK(uart_tx_full());

    /* Time passes while the console waits (console.c's unpaced write): the rest goes out behind. */
    m.time_passes = true;
    unsigned polls = m.full_polls;
    while (i < n) {
        while (uart_tx_full()) {
        }
        uart_tx(text[i++]);
    }
    CHECK(m.full_polls > polls); /* it did wait for the wire */
    wire_takes(DEPTH);
    CHECK(m.wire_n == n && memcmp(m.wire, text, n) == 0);
    CHECK(m.tx_n == 0 && !uart_tx_full());
    CHECK(!line()); /* TX interrupts stay off */
    check_clean();
    m.time_passes = false;
}

/* conmux_rx_irq's order: clear, then read until empty, and again until a look after the clear finds
 * nothing. Bounded here, so a driver that never reports empty fails instead of hanging. */
static size_t drain_rx(char *out, size_t cap)
{
    size_t n = 0;
    for (unsigned round = 0; round < 4u; round++) {
        uart_rx_irq_clear();
        if (uart_rx_empty()) {
            return n;
        }
        while (!uart_rx_empty() && n < cap) {
            out[n++] = uart_getc();
        }
    }
    CHECK(!"the receive FIFO never reported empty");
    return n;
}

static void test_hyp_receive(void)
{
    uint32_t ufcr = m.ufcr, ucr2 = m.ucr2, ucr3 = m.ucr3, ucr4 = m.ucr4;
    uart_rx_irq_enable();
    /* RRDY from the first character (RXTL 1) and its enable; the rest of UFCR and the other registers
     * as they were. */
    CHECK(m.ucr1 & IMX_UCR1_RRDYEN);
    CHECK((m.ufcr & IMX_UFCR_RXTL_MASK) == 1u);
    CHECK((m.ufcr & ~IMX_UFCR_RXTL_MASK) == (ufcr & ~IMX_UFCR_RXTL_MASK));
    CHECK(m.ucr2 == ucr2 && m.ucr3 == ucr3 && m.ucr4 == ucr4);
    CHECK((m.ucr1 & IMX_UCR1_IRQS) == IMX_UCR1_RRDYEN); /* the one source */
    CHECK(!line() && uart_rx_empty());

    /* One character raises the line; looking does not take it. */
    line_receives('r', 0);
    CHECK(line());
    CHECK(!uart_rx_empty() && !uart_rx_empty() && m.rx_n == 1);
    uint32_t ucr1 = m.ucr1;
    uart_rx_irq_clear(); /* a level: nothing to acknowledge, nothing changed */
    CHECK(m.ucr1 == ucr1 && m.rx_n == 1 && line());

    /* Several, one with a framing error (its data byte still arrives, as on the PL011), all 8 bits. */
    static const char typed[] = "rtmux\x14\xe9"
                                "2";
    for (size_t i = 0; i + 1u < sizeof(typed); i++) {
        line_receives(typed[i], i == 3u ? IMX_URXD_ERR | IMX_URXD_FRMERR : 0u);
    }
    char got[64];
    size_t n = drain_rx(got, sizeof(got));
    CHECK(n == sizeof(typed) && got[0] == 'r' && memcmp(got + 1, typed, sizeof(typed) - 1u) == 0);
    CHECK(uart_rx_empty() && m.rx_n == 0);
    CHECK(!line()); /* drained: the line is down */

    /* A full FIFO's worth. */
    for (unsigned i = 0; i < DEPTH; i++) {
        line_receives((char)('A' + i % 26u), 0);
    }
    CHECK(line());
    n = drain_rx(got, sizeof(got));
    CHECK(n == DEPTH);
    for (unsigned i = 0; i < n; i++) {
        CHECK(got[i] == (char)('A' + i % 26u));
    }
    CHECK(!line() && uart_rx_empty());
    check_clean();
}

static void test_rtos(void)
{
    static const char text[] = "rtos: a line longer than the i.MX UART's FIFO, polled out in order\n";
    const size_t n = sizeof(text) - 1u;

    model_firmware_state();
    m.ucr1 &= ~IMX_UCR1_UARTEN; /* init turns on what it uses */
    m.ucr2 &= ~IMX_UCR2_TXEN;
    uint32_t ufcr = m.ufcr;
    rtos_uart_init();
    CHECK(m.ucr1 & IMX_UCR1_UARTEN);
    CHECK(m.ucr2 & IMX_UCR2_TXEN);
    CHECK((m.ucr1 & IMX_UCR1_IRQS) == 0 && (m.ucr2 & IMX_UCR2_IRQS) == 0); /* polled */
    CHECK((m.ucr3 & IMX_UCR3_IRQS) == 0 && (m.ucr4 & IMX_UCR4_IRQS) == 0);
    CHECK(!line());
    CHECK((m.ucr2 & (IMX_UCR2_WS | IMX_UCR2_IRTS)) == (IMX_UCR2_WS | IMX_UCR2_IRTS));
    CHECK(m.ufcr == ufcr);
    check_clean();

    /* uart_putc waits for room itself: the wire moves only while it polls a full FIFO. */
    m.time_passes = true;
    for (size_t i = 0; i < n; i++) {
        rtos_uart_putc(text[i]);
    }
    CHECK(m.full_polls > 0);
    wire_takes(DEPTH);
    CHECK(m.wire_n == n && memcmp(m.wire, text, n) == 0);
    check_clean();
}

int main(void)
{
    test_hyp_init();
    test_hyp_transmit();
    test_hyp_receive();
    test_rtos();
    UNIT_DONE("test_imx_uart");
}
