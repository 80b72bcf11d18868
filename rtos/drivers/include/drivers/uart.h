/*
 * The console UART, polled transmit. One driver implements it, the one board.h's BOARD_UART_DRIVER
 * names (drivers/pl011.c, drivers/imx_uart.c; the Makefile compiles that one only). The boot firmware
 * (or QEMU, or the rtmux hypervisor's emulated UART) has set the baud rate, the line format and the
 * pins; the driver only makes sure the transmitter is on.
 */
#ifndef DRIVERS_UART_H
#define DRIVERS_UART_H

void uart_init(void);
/* Waits for room in the transmit FIFO, then queues c. */
void uart_putc(char c);

#endif /* DRIVERS_UART_H */
