/*
 * The one board fact the i.MX UART drivers use, for their host test (test_imx_uart.c): the i.MX 8M Plus
 * EVK's console UART (UART2, platform/imx8mp-evk/board.toml). The test's model of the registers answers
 * only accesses at this base.
 */
#ifndef BOARD_H
#define BOARD_H

#define BOARD_UART_BASE 0x30890000ul

#endif /* BOARD_H */
