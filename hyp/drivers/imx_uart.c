/*
 * The physical console UART when it is an NXP i.MX UART (drivers/uart.h; board.h's BOARD_UART_DRIVER
 * "imx_uart"; registers in arm64/imx_uart.h). The hypervisor owns it; only core/console.c writes and
 * only the console CPU reads.
 *
 * The firmware (U-Boot) has set the baud rate (UBIR, UBMR and UFCR.RFDIV: a divisor of a reference clock
 * this driver does not know), the line format and the pins; the driver changes none of them. So it never
 * resets the UART: a software reset (UCR2.SRST = 0) resets UBIR and UBMR too and would leave the console
 * at a baud rate nobody chose; every UCR2 write here keeps SRST set. It turns the transmitter and the
 * receiver on and every interrupt source off, as the PL011 driver clears its mask register, so that the
 * receive interrupt it enables later is the only source of the UART's line.
 */
#include "drivers/uart.h"

#include <stdint.h>

#include "arm64/imx_uart.h"
#include "board.h"

static uint32_t rd(uint32_t off)
{
    return imx_uart_read(BOARD_UART_BASE, off);
}

static void wr(uint32_t off, uint32_t val)
{
    imx_uart_write(BOARD_UART_BASE, off, val);
}

void uart_init(void)
{
    wr(IMX_UCR4, rd(IMX_UCR4) & ~IMX_UCR4_IRQS);
    wr(IMX_UCR3, (rd(IMX_UCR3) & ~IMX_UCR3_IRQS) | IMX_UCR3_RXDMUXSEL);
    wr(IMX_UCR2, (rd(IMX_UCR2) & ~IMX_UCR2_IRQS) | IMX_UCR2_SRST | IMX_UCR2_TXEN | IMX_UCR2_RXEN);
    wr(IMX_UCR1, (rd(IMX_UCR1) & ~IMX_UCR1_IRQS) | IMX_UCR1_UARTEN);
}

bool uart_tx_full(void)
{
    return (rd(IMX_UTS) & IMX_UTS_TXFULL) != 0;
}

void uart_tx(char c)
{
    wr(IMX_UTXD, (uint32_t)(unsigned char)c);
}

/* The receive interrupt is USR1.RRDY, raised while the RX FIFO holds at least RXTL characters: RXTL = 1
 * makes it the first character (U-Boot leaves 0, Linux's driver more than 1 for a port that is not its
 * console). The rest of UFCR (RFDIV: the baud rate; DCE/DTE; TXTL) is kept. */
void uart_rx_irq_enable(void)
{
    wr(IMX_UFCR, (rd(IMX_UFCR) & ~IMX_UFCR_RXTL_MASK) | 1u);
    wr(IMX_UCR1, rd(IMX_UCR1) | IMX_UCR1_RRDYEN);
}

/* Nothing to acknowledge: RRDY is a level, not a latched event, and falls by itself once the reads that
 * follow (conmux_rx_irq) leave the RX FIFO below RXTL, i.e. empty. No other source is enabled. */
void uart_rx_irq_clear(void) {}

bool uart_rx_empty(void)
{
    return (rd(IMX_USR2) & IMX_USR2_RDR) == 0;
}

/* A character received with an error (URXD.ERR: parity, framing, break, overrun) is returned as its data
 * byte, as the PL011 driver does: the console has no way to report it. */
char uart_getc(void)
{
    return (char)(rd(IMX_URXD) & IMX_URXD_DATA);
}
