/*
 * The physical console UART, owned by the hypervisor: transmit by polling the FIFO's room,
 * interrupt-driven receive. One driver implements it, the one board.h's BOARD_UART_DRIVER names
 * (drivers/pl011.c, drivers/imx_uart.c; the Makefile compiles that one only). Only core/console.c
 * writes (under its lock) and only the console CPU reads (core/conmux.c). Every driver assumes the
 * firmware (or QEMU) has set the baud rate, the line format and the pins.
 */
#ifndef HYP_DRIVERS_UART_H
#define HYP_DRIVERS_UART_H

#include <stdbool.h>

/* Transmitter and receiver on, every UART interrupt source off. */
void uart_init(void);
/* Whether the transmit FIFO is full (then uart_tx would lose the character). */
bool uart_tx_full(void);
/* One character into the transmit FIFO, which must have room. */
void uart_tx(char c);
/* The receive interrupt on: raised while a received character waits. */
void uart_rx_irq_enable(void);
/* Acknowledges the receive interrupt; then read until uart_rx_empty (see conmux_rx_irq for the order:
 * a driver whose interrupt is a level that the reads lower may have nothing to do here). */
void uart_rx_irq_clear(void);
bool uart_rx_empty(void);
/* The oldest received character; only after uart_rx_empty() said false. */
char uart_getc(void);

#endif /* HYP_DRIVERS_UART_H */
