/*
 * The physical PL011 console UART (drivers/pl011.c): transmit by polling its FIFO's room, interrupt-driven
 * receive.
 */
#ifndef HYP_DRIVERS_PL011_H
#define HYP_DRIVERS_PL011_H

#include <stdbool.h>

void pl011_init(void);
/* Whether the transmit FIFO is full (then pl011_tx would lose the character). */
bool pl011_tx_full(void);
/* One character into the transmit FIFO, which must have room. */
void pl011_tx(char c);
/* Receive interrupts (data and timeout) on. */
void pl011_rx_irq_enable(void);
/* Clears the receive interrupts; then read until pl011_rx_empty (see conmux_rx_irq for the order). */
void pl011_rx_irq_clear(void);
bool pl011_rx_empty(void);
char pl011_getc(void);

#endif /* HYP_DRIVERS_PL011_H */
