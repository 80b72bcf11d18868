/*
 * The physical console UART when it is an Arm PL011 (drivers/uart.h; board.h's BOARD_UART_DRIVER
 * "pl011"). The hypervisor owns it; only core/console.c writes and only the console CPU reads.
 */
#include "drivers/uart.h"

#include <stdint.h>

#include "arm64/pl011.h"
#include "board.h"

static inline volatile uint32_t *uart(uintptr_t off)
{
    return (volatile uint32_t *)(BOARD_UART_BASE + off);
}

void uart_init(void)
{
    *uart(PL011_IMSC) = 0;
    *uart(PL011_CR) |= PL011_CR_UARTEN | PL011_CR_TXE | PL011_CR_RXE;
}

bool uart_tx_full(void)
{
    return (*uart(PL011_FR) & PL011_FR_TXFF) != 0;
}

void uart_tx(char c)
{
    *uart(PL011_DR) = (uint32_t)(unsigned char)c;
}

void uart_rx_irq_enable(void)
{
    *uart(PL011_IMSC) = PL011_INT_RX | PL011_INT_RT;
}

void uart_rx_irq_clear(void)
{
    *uart(PL011_ICR) = PL011_INT_RX | PL011_INT_RT;
}

bool uart_rx_empty(void)
{
    return (*uart(PL011_FR) & PL011_FR_RXFE) != 0;
}

char uart_getc(void)
{
    return (char)(*uart(PL011_DR) & PL011_DR_DATA);
}
