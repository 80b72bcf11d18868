/*
 * PL011 UART, polled transmit.
 */
#ifndef DRIVERS_PL011_H
#define DRIVERS_PL011_H

void pl011_init(void);
void pl011_putc(char c);

#endif /* DRIVERS_PL011_H */
