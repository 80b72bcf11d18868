/*
 * The console UART when it is an NXP i.MX UART (drivers/uart.h; board.h's BOARD_UART_DRIVER
 * "imx_uart"; registers in arm64/imx_uart.h): transmit only, polled.
 *
 * The boot firmware (U-Boot) has set the baud rate (UBIR, UBMR and UFCR.RFDIV: a divisor of a reference
 * clock the rtos does not know), the line format and the pins; the driver changes none of them. So it
 * never resets the UART: a software reset (UCR2.SRST = 0) resets UBIR and UBMR too and would leave the
 * console at a baud rate nobody chose; the UCR2 write here keeps SRST set. It turns the transmitter on
 * and, polled, every interrupt source off.
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
    wr(IMX_UCR3, rd(IMX_UCR3) & ~IMX_UCR3_IRQS);
    wr(IMX_UCR2, (rd(IMX_UCR2) & ~IMX_UCR2_IRQS) | IMX_UCR2_SRST | IMX_UCR2_TXEN);
    wr(IMX_UCR1, (rd(IMX_UCR1) & ~IMX_UCR1_IRQS) | IMX_UCR1_UARTEN);
}

void uart_putc(char c)
{
    while (rd(IMX_UTS) & IMX_UTS_TXFULL) {
    }
    wr(IMX_UTXD, (uint32_t)(unsigned char)c);
}
